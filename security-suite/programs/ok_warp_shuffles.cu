// Correct: warp-level primitives only, no shared memory: an inclusive warp scan with
// __shfl_up_sync, a butterfly max with __shfl_xor_sync, a broadcast with __shfl_sync
// (each warp's max minus its lane 0 value), ballots and popcounts for a
// warp-aggregated atomic append.
#include "../../examples/common.h"
#include <vector>

__global__ void warp_ops(const int *x, int n, int *scan, int *wmax, int *out, int *out_count) {
  int i = blockIdx.x * blockDim.x + threadIdx.x, lane = threadIdx.x % 32;
  int v = i < n ? x[i] : 0;
  int s = v;
  for (int o = 1; o < 32; o *= 2) {
    int u = __shfl_up_sync(0xffffffff, s, o);
    if (lane >= o) s += u;
  }
  if (i < n) scan[i] = s;
  int m = v;
  for (int o = 16; o > 0; o /= 2) m = max(m, __shfl_xor_sync(0xffffffff, m, o));
  int first = __shfl_sync(0xffffffff, v, 0); // broadcast lane 0's value
  if (lane == 31 && i / 32 < n / 32) wmax[i / 32] = m - first; // spread above the first
  bool keep = i < n && v > 900;
  unsigned mask = __ballot_sync(0xffffffff, keep);
  int base = 0;
  if (lane == 0 && mask) base = atomicAdd(out_count, __popc(mask));
  base = __shfl_sync(0xffffffff, base, 0);
  if (keep) out[base + __popc(mask & ((1u << lane) - 1))] = v;
}

int main() {
  const int n = 1 << 15;
  std::vector<int> h(n);
  for (int i = 0; i < n; ++i) h[i] = (i * 7919) % 1000;
  int *x, *scan, *wmax, *out, *cnt;
  CK(cudaMalloc(&x, n * sizeof(int)));
  CK(cudaMalloc(&scan, n * sizeof(int)));
  CK(cudaMalloc(&wmax, n / 32 * sizeof(int)));
  CK(cudaMalloc(&out, n * sizeof(int)));
  CK(cudaMalloc(&cnt, sizeof(int)));
  CK(cudaMemcpy(x, h.data(), n * sizeof(int), cudaMemcpyHostToDevice));
  CK(cudaMemset(cnt, 0, sizeof(int)));
  warp_ops<<<n / 256, 256>>>(x, n, scan, wmax, out, cnt);
  std::vector<int> sc(n), wm(n / 32);
  int c = 0;
  CK(cudaMemcpy(sc.data(), scan, n * sizeof(int), cudaMemcpyDeviceToHost));
  CK(cudaMemcpy(wm.data(), wmax, n / 32 * sizeof(int), cudaMemcpyDeviceToHost));
  CK(cudaMemcpy(&c, cnt, sizeof c, cudaMemcpyDeviceToHost));
  std::vector<int> o(c);
  CK(cudaMemcpy(o.data(), out, c * sizeof(int), cudaMemcpyDeviceToHost));
  long long s = 0, ws = 0, os = 0;
  for (int k = 31; k < n; k += 32) s += sc[k];
  for (int v : wm) ws += v;
  for (int v : o) os += v;
  std::printf("warp totals %lld, warp spreads %lld, %d kept summing to %lld\n", s, ws, c, os);
  CK(cudaFree(x));
  CK(cudaFree(scan));
  CK(cudaFree(wmax));
  CK(cudaFree(out));
  CK(cudaFree(cnt));
  return 0;
}
