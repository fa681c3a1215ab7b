// Correct: cooperative groups thread-block tiles: tiled_partition<32> and <8>, tile
// shuffles (shfl_down, shfl_xor), tile ballot/any, tile.sync and thread_rank, with
// hand-written tile reductions (cg::reduce is avoided: clang-19 miscompiles it, see
// the toolchain notes).
#include "../../examples/common.h"
#include <cooperative_groups.h>
#include <vector>

namespace cg = cooperative_groups;

template <class Tile> __device__ int tile_sum(Tile t, int v) {
  for (int o = t.size() / 2; o > 0; o /= 2) v += t.shfl_down(v, o);
  return v;
}

__global__ void tiles(const int *x, int n, int *sum32, int *max8, int *odd_tiles) {
  cg::thread_block block = cg::this_thread_block();
  auto w = cg::tiled_partition<32>(block);
  auto q = cg::tiled_partition<8>(block);
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  int v = i < n ? x[i] : 0;
  int s = tile_sum(w, v);
  if (w.thread_rank() == 0) atomicAdd(sum32, s);
  int m = v;
  for (int o = q.size() / 2; o > 0; o /= 2) m = max(m, q.shfl_xor(m, o));
  if (q.thread_rank() == 0) atomicMax(max8, m);
  // Every lane of the tile must reach a tile collective: vote before branching on rank.
  unsigned odd = w.ballot(v & 1);
  bool hot = w.any(v > 990);
  if (w.thread_rank() == 0 && hot) atomicAdd(odd_tiles, __popc(odd));
  block.sync();
}

int main() {
  const int n = 1 << 16;
  std::vector<int> h(n);
  for (int i = 0; i < n; ++i) h[i] = (i * 17) % 997;
  int *x, *out;
  CK(cudaMalloc(&x, n * sizeof(int)));
  CK(cudaMalloc(&out, 3 * sizeof(int)));
  CK(cudaMemcpy(x, h.data(), n * sizeof(int), cudaMemcpyHostToDevice));
  CK(cudaMemset(out, 0, 3 * sizeof(int)));
  tiles<<<n / 256, 256>>>(x, n, out, out + 1, out + 2);
  int o[3];
  CK(cudaMemcpy(o, out, sizeof o, cudaMemcpyDeviceToHost));
  std::printf("sum %d, max %d, odd lanes in hot tiles %d\n", o[0], o[1], o[2]);
  CK(cudaFree(x));
  CK(cudaFree(out));
  return 0;
}
