// Correct: CUB block-wide primitives (their temporary storage lives in shared memory,
// union-ed and reused after a barrier): BlockReduce for per-block sums and maxima,
// BlockScan for an exclusive scan that becomes a stream compaction. The reductions run
// on float: CUB reduces 32-bit integers with redux.sync on sm_80+, which clang-19 emits
// after divergent code where it faults (toolchain notes); float takes the shuffle path.
#include "../../examples/common.h"
#include <cub/block/block_reduce.cuh>
#include <cub/block/block_scan.cuh>
#include <vector>

constexpr int BS = 256;

__global__ void stats_and_compact(const int *x, int n, int *block_sum, int *block_max, int *kept,
                                  int *kept_count) {
  using Reduce = cub::BlockReduce<float, BS>;
  using Scan = cub::BlockScan<int, BS>;
  __shared__ union {
    typename Reduce::TempStorage reduce;
    typename Scan::TempStorage scan;
  } tmp;
  __shared__ int base;
  int i = blockIdx.x * BS + threadIdx.x;
  int v = i < n ? x[i] : 0;
  float s = Reduce(tmp.reduce).Sum((float)v); // exact: at most 256 * 999 < 2^24
  __syncthreads();
  float m = Reduce(tmp.reduce).Reduce((float)v, cub::Max());
  __syncthreads();
  if (threadIdx.x == 0) {
    block_sum[blockIdx.x] = (int)s;
    block_max[blockIdx.x] = (int)m;
  }
  int keep = i < n && v % 3 == 0, pos, total;
  Scan(tmp.scan).ExclusiveSum(keep, pos, total);
  if (threadIdx.x == 0) base = atomicAdd(kept_count, total);
  __syncthreads();
  if (keep) kept[base + pos] = v;
}

int main() {
  const int n = 100000, blocks = (n + BS - 1) / BS;
  std::vector<int> h(n);
  for (int i = 0; i < n; ++i) h[i] = (i * 31 + 7) % 1000;
  int *x, *bs, *bm, *kept, *cnt;
  CK(cudaMalloc(&x, n * sizeof(int)));
  CK(cudaMalloc(&bs, blocks * sizeof(int)));
  CK(cudaMalloc(&bm, blocks * sizeof(int)));
  CK(cudaMalloc(&kept, n * sizeof(int)));
  CK(cudaMalloc(&cnt, sizeof(int)));
  CK(cudaMemcpy(x, h.data(), n * sizeof(int), cudaMemcpyHostToDevice));
  CK(cudaMemset(cnt, 0, sizeof(int)));
  stats_and_compact<<<blocks, BS>>>(x, n, bs, bm, kept, cnt);
  std::vector<int> s(blocks), m(blocks);
  int c = 0;
  CK(cudaMemcpy(s.data(), bs, blocks * sizeof(int), cudaMemcpyDeviceToHost));
  CK(cudaMemcpy(m.data(), bm, blocks * sizeof(int), cudaMemcpyDeviceToHost));
  CK(cudaMemcpy(&c, cnt, sizeof c, cudaMemcpyDeviceToHost));
  std::vector<int> k(c);
  CK(cudaMemcpy(k.data(), kept, c * sizeof(int), cudaMemcpyDeviceToHost));
  long long total = 0, ksum = 0;
  int mx = 0;
  for (int b = 0; b < blocks; ++b) {
    total += s[b];
    mx = m[b] > mx ? m[b] : mx;
  }
  for (int v : k) ksum += v; // order depends on block scheduling; the sum does not
  std::printf("sum %lld, max %d, kept %d with sum %lld\n", total, mx, c, ksum);
  CK(cudaFree(x));
  CK(cudaFree(bs));
  CK(cudaFree(bm));
  CK(cudaFree(kept));
  CK(cudaFree(cnt));
  return 0;
}
