// ~2.7 ms per pass on H100 (measured, plain build): 20 Jacobi steps (2 kernels each) on a 4096 x 4096 fp32 grid, 64 MB arrays, plus one reset copy.
#include "../harness.h"

// Every pass starts from the initial state: a copy kernel resets A at the start of the pass
// (part of the timed workload), so that every pass computes the same thing and the
// reference needs only tsteps steps whatever --iters says.
__global__ void copy_kernel(int count, const float *src, float *dst) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < count) dst[i] = src[i];
}

// B[i][j] = 0.2 * (A[i][j] + its four neighbours) for interior points.
__global__ void jacobi2d_kernel1(int n, const float *A, float *B) {
  int j = blockIdx.x * blockDim.x + threadIdx.x;
  int i = blockIdx.y * blockDim.y + threadIdx.y;
  if (i > 0 && i < n - 1 && j > 0 && j < n - 1)
    B[i * n + j] = 0.2f * (A[i * n + j] + A[i * n + (j - 1)] + A[i * n + (j + 1)] +
                           A[(i + 1) * n + j] + A[(i - 1) * n + j]);
}

// A[i][j] = B[i][j] for interior points.
__global__ void jacobi2d_kernel2(int n, const float *B, float *A) {
  int j = blockIdx.x * blockDim.x + threadIdx.x;
  int i = blockIdx.y * blockDim.y + threadIdx.y;
  if (i > 0 && i < n - 1 && j > 0 && j < n - 1) A[i * n + j] = B[i * n + j];
}

int main(int argc, char **argv) {
  perf::Run run(argc, argv, "jacobi2d", 10);
  const int n = 4096, tsteps = 20;
  const int count = n * n;

  std::vector<float> hA0(count);
  perf::fill(hA0, 151);

  float *A0, *A, *B;
  CK(cudaMalloc(&A0, count * sizeof(float)));
  CK(cudaMalloc(&A, count * sizeof(float)));
  CK(cudaMalloc(&B, count * sizeof(float)));
  CK(cudaMemcpy(A0, hA0.data(), count * sizeof(float), cudaMemcpyHostToDevice));
  CK(cudaMemset(B, 0, count * sizeof(float)));

  const int bs = 256;
  dim3 block(32, 8);
  dim3 grid(perf::cdiv(n, block.x), perf::cdiv(n, block.y));
  auto pass = [&] {
    copy_kernel<<<perf::cdiv(count, bs), bs>>>(count, A0, A);
    for (int t = 0; t < tsteps; t++) {
      jacobi2d_kernel1<<<grid, block>>>(n, A, B);
      jacobi2d_kernel2<<<grid, block>>>(n, B, A);
    }
  };
  run.warmup(pass);
  run.time(pass);

  std::vector<float> hA(count);
  CK(cudaMemcpy(hA.data(), A, count * sizeof(float), cudaMemcpyDeviceToHost));

  // Reference: the same tsteps steps on the CPU, in float with the same operation order.
  std::vector<float> ra(hA0), rb(count, 0.0f);
  for (int t = 0; t < tsteps; t++) {
    for (int i = 1; i < n - 1; i++)
      for (int j = 1; j < n - 1; j++)
        rb[i * n + j] = 0.2f * (ra[i * n + j] + ra[i * n + (j - 1)] + ra[i * n + (j + 1)] +
                                ra[(i + 1) * n + j] + ra[(i - 1) * n + j]);
    for (int i = 1; i < n - 1; i++)
      for (int j = 1; j < n - 1; j++) ra[i * n + j] = rb[i * n + j];
  }
  bool ok = perf::close(hA.data(), ra.data(), count, 1e-3f, 1e-5f, "A");

  CK(cudaFree(A0));
  CK(cudaFree(A));
  CK(cudaFree(B));
  return run.finish(ok, perf::checksum(hA));
}
