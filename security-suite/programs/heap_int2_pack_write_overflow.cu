// ReLU over an int32 feature vector, vectorised as int2 (two values per thread, one
// 8-byte store). The element count is odd, so the last thread's int2 store covers
// the last element and the 4 bytes after the buffer.
// Bug: heap-buffer-overflow, WRITE of size 8 (vector, straddling the end).
#include "../../examples/common.h"
#include <vector>

__global__ void relu2(const int *in, int *out, int n) {
  int v = blockIdx.x * blockDim.x + threadIdx.x;
  if (2 * v < n) {
    int a = in[2 * v];
    int b = 2 * v + 1 < n ? in[2 * v + 1] : 0;
    reinterpret_cast<int2 *>(out)[v] = make_int2(max(a, 0), max(b, 0)); // cusafe-expect: heap-buffer-overflow
  }
}

int main() {
  const int n = 1001;
  std::vector<int> h(n);
  for (int i = 0; i < n; ++i) h[i] = (i % 7) - 3;
  int *in, *out;
  CK(cudaMalloc(&in, n * sizeof(int)));
  CK(cudaMalloc(&out, n * sizeof(int)));
  CK(cudaMemcpy(in, h.data(), n * sizeof(int), cudaMemcpyHostToDevice));
  relu2<<<(n / 2 + 128) / 128, 128>>>(in, out, n);
  CK(cudaDeviceSynchronize());
  CK(cudaMemcpy(h.data(), out, n * sizeof(int), cudaMemcpyDeviceToHost));
  long long sum = 0;
  for (int v : h) sum += v;
  std::printf("relu2: sum %lld, last %d\n", sum, h[n - 1]);
  CK(cudaFree(in));
  CK(cudaFree(out));
  return 0;
}
