// Exclusive block scan on a dynamic shared pool carved into the values (blockDim.x
// ints) and the per-warp sums that follow them. The exclusive shift stores value i at
// vals[i + 1], so the last thread writes vals[blockDim.x]: the first warp sum, still
// inside the pool. Bug: shared-buffer-overflow, WRITE (dynamic shared, one carved
// buffer into the next). Out of scope: dynamic shared memory is bounded as a whole
// (design: by %dynamic_smem_size); carved sub-buffers have no bounds of their own.
#include "../../examples/common.h"
#include <vector>

__global__ void exclusive_scan(const int *in, int *out, int n) {
  extern __shared__ int pool[];
  int *vals = pool;                   // blockDim.x ints
  int *warp_sums = pool + blockDim.x; // blockDim.x / 32 ints
  int g = blockIdx.x * blockDim.x + threadIdx.x, lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  if (threadIdx.x == 0) vals[0] = 0;
  vals[threadIdx.x + 1] = g < n ? in[g] : 0; // cusafe-expect: shared-buffer-overflow
  __syncthreads();
  int v = vals[threadIdx.x];
  for (int o = 1; o < 32; o *= 2) {
    int u = __shfl_up_sync(0xffffffff, v, o);
    if (lane >= o) v += u;
  }
  if (lane == 31) warp_sums[warp] = v;
  __syncthreads();
  int offset = 0;
  for (int w = 0; w < warp; ++w) offset += warp_sums[w];
  if (g < n) out[g] = v + offset;
}

int main() {
  const int n = 4096, bs = 256;
  std::vector<int> h(n);
  for (int i = 0; i < n; ++i) h[i] = i % 3;
  int *in, *out;
  CK(cudaMalloc(&in, n * sizeof(int)));
  CK(cudaMalloc(&out, n * sizeof(int)));
  CK(cudaMemcpy(in, h.data(), n * sizeof(int), cudaMemcpyHostToDevice));
  exclusive_scan<<<n / bs, bs, (bs + bs / 32) * sizeof(int)>>>(in, out, n);
  CK(cudaDeviceSynchronize());
  CK(cudaMemcpy(h.data(), out, n * sizeof(int), cudaMemcpyDeviceToHost));
  std::printf("block-exclusive scan: out[0]=%d out[100]=%d out[255]=%d\n", h[0], h[100], h[255]);
  CK(cudaFree(in));
  CK(cudaFree(out));
  return 0;
}
