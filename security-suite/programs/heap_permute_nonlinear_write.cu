// Applies a permutation (the scatter step of a sort by key): out[perm[i]] = in[i].
// The permutation was read from a file written for a larger problem and one entry
// points far beyond out, into another live buffer (the weights), which it silently
// overwrites. Bug: heap-buffer-overflow, WRITE (non-linear, into another live buffer).
#include "../../examples/common.h"
#include <vector>

__global__ void permute(const int *in, const long long *perm, int *out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[perm[i]] = in[i]; // cusafe-expect: heap-buffer-overflow
}

int main() {
  const int n = 4096;
  int *in, *out, *weights;
  long long *perm;
  CK(cudaMalloc(&in, n * sizeof(int)));
  CK(cudaMalloc(&out, n * sizeof(int)));
  CK(cudaMalloc(&weights, n * sizeof(int)));
  CK(cudaMalloc(&perm, n * sizeof(long long)));
  std::vector<int> h(n);
  std::vector<long long> p(n);
  for (int i = 0; i < n; ++i) {
    h[i] = i;
    p[i] = (i * 1021LL) % n; // 1021 is odd: a bijection on [0, n)
  }
  p[2222] = (weights - out) + 100; // the stale entry, wherever weights lies
  CK(cudaMemcpy(in, h.data(), n * sizeof(int), cudaMemcpyHostToDevice));
  CK(cudaMemcpy(perm, p.data(), n * sizeof(long long), cudaMemcpyHostToDevice));
  CK(cudaMemset(out, 0, n * sizeof(int)));
  CK(cudaMemset(weights, 0, n * sizeof(int)));
  permute<<<n / 256, 256>>>(in, perm, out, n);
  CK(cudaDeviceSynchronize());
  CK(cudaMemcpy(h.data(), out, n * sizeof(int), cudaMemcpyDeviceToHost));
  long long sum = 0;
  for (int v : h) sum += v;
  std::printf("permute: sum %lld (expected %lld)\n", sum, (long long)n * (n - 1) / 2);
  CK(cudaFree(in));
  CK(cudaFree(out));
  CK(cudaFree(weights));
  CK(cudaFree(perm));
  return 0;
}
