// Row-wise L1 normalisation of a 512 x 2048 matrix with one block per row and one
// thread per column: 2048 threads per block, over the limit of 1024. The launch fails
// with cudaErrorInvalidConfiguration, nobody checks, and the program copies back the
// output buffer as it was (zeros from the memset) and prints it as the result.
// Bug: api-error (the failed launch, at the launch line; reported only with
// report_api_errors=1, which main sets itself).
#include "../../examples/common.h"
#include <vector>

__global__ void normalize_rows(const float *in, float *out, int cols) {
  __shared__ float total;
  const float *row = in + size_t(blockIdx.x) * cols;
  if (threadIdx.x == 0) total = 0.0f;
  __syncthreads();
  atomicAdd(&total, row[threadIdx.x]);
  __syncthreads();
  out[size_t(blockIdx.x) * cols + threadIdx.x] = row[threadIdx.x] / total;
}

int main() {
  // cusafe reports a failed CUDA call only when asked (the suite's runner sets no
  // options), so the program asks for it itself, before its first CUDA call.
  setenv("CUSAFE_OPTIONS", "report_api_errors=1", 1);
  const int rows = 512, cols = 2048;
  const size_t bytes = size_t(rows) * cols * sizeof(float);
  std::vector<float> h(size_t(rows) * cols);
  for (size_t i = 0; i < h.size(); ++i) h[i] = float(1 + i % 7);
  float *in, *out;
  CK(cudaMalloc(&in, bytes));
  CK(cudaMalloc(&out, bytes));
  CK(cudaMemcpy(in, h.data(), bytes, cudaMemcpyHostToDevice));
  CK(cudaMemset(out, 0, bytes));
  normalize_rows<<<rows, cols>>>(in, out, cols); // cusafe-expect: api-error
  CK(cudaMemcpy(h.data(), out, bytes, cudaMemcpyDeviceToHost));
  double total = 0;
  for (float v : h) total += v;
  std::printf("normalised %d rows: sum of all rows %.1f (each row sums to 1)\n", rows, total);
  CK(cudaFree(in));
  CK(cudaFree(out));
  return 0;
}
