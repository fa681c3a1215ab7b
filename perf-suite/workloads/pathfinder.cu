// ~1.3 ms per pass on H100 (measured): 1001 rows x 262144 columns of int weights (1 GB), 50 launches of a 20-row pyramid; 30 passes ~ 38 ms
// Rodinia pathfinder: dynamic programming over a grid, row by row:
//   dst[c] = wall[r][c] + min(src[c-1], src[c], src[c+1]).
// Each block keeps a 256-wide strip of the row in shared memory and advances it `pyramid`
// rows per launch with a one-cell halo per row (the valid region shrinks each row).
// Each pass starts from the same read-only first row, so the CPU reference runs one pass.
#include "../harness.h"

#include <algorithm>
#include <vector>

namespace {

constexpr int BLOCK = 256;
constexpr int HALO = 1;

__device__ __forceinline__ bool in_range(int x, int lo, int hi) { return x >= lo && x <= hi; }

__global__ void dynproc(int iteration, const int *wall, const int *src, int *dst, int cols,
                        int start_step, int border) {
  __shared__ int prev[BLOCK];
  __shared__ int result[BLOCK];
  int bx = blockIdx.x, tx = threadIdx.x;

  // Each block writes (BLOCK - 2*iteration*HALO) columns; its strip starts `border` earlier.
  int small_block_cols = BLOCK - iteration * HALO * 2;
  int blk_x = small_block_cols * bx - border;
  int blk_x_max = blk_x + BLOCK - 1;
  int xidx = blk_x + tx;

  int valid_x_min = blk_x < 0 ? -blk_x : 0;
  int valid_x_max = blk_x_max > cols - 1 ? BLOCK - 1 - (blk_x_max - cols + 1) : BLOCK - 1;
  int w = max(tx - 1, valid_x_min);
  int e = min(tx + 1, valid_x_max);
  bool is_valid = in_range(tx, valid_x_min, valid_x_max);

  if (in_range(xidx, 0, cols - 1)) prev[tx] = src[xidx];
  __syncthreads();

  bool computed = false;
  for (int i = 0; i < iteration; i++) {
    computed = false;
    if (in_range(tx, i + 1, BLOCK - i - 2) && is_valid) {
      computed = true;
      int shortest = min(prev[w], prev[tx]);
      shortest = min(shortest, prev[e]);
      size_t index = (size_t)cols * (start_step + i) + xidx;
      result[tx] = shortest + wall[index];
    }
    __syncthreads();
    if (i == iteration - 1) break;
    if (computed) prev[tx] = result[tx];
    __syncthreads();
  }
  if (computed) dst[xidx] = result[tx];
}

} // namespace

int main(int argc, char **argv) {
  perf::Run run(argc, argv, "pathfinder", 30);
  const int rows = 1001, cols = 1 << 18;
  const int pyramid = 20;
  const size_t n = (size_t)rows * cols;

  std::vector<int> wall(n);
  {
    perf::Rng rng(31);
    for (auto &v : wall) v = (int)rng.below(10);
  }

  int *d_wall, *d_first, *d_buf[2];
  const size_t wall_n = n - cols; // rows 1 .. rows-1
  CK(cudaMalloc(&d_wall, wall_n * sizeof(int)));
  CK(cudaMalloc(&d_first, cols * sizeof(int)));
  CK(cudaMalloc(&d_buf[0], cols * sizeof(int)));
  CK(cudaMalloc(&d_buf[1], cols * sizeof(int)));
  CK(cudaMemcpy(d_wall, wall.data() + cols, wall_n * sizeof(int), cudaMemcpyHostToDevice));
  CK(cudaMemcpy(d_first, wall.data(), cols * sizeof(int), cudaMemcpyHostToDevice));

  const int border = pyramid * HALO;
  const int small_block = BLOCK - 2 * border;
  const unsigned blocks = perf::cdiv(cols, small_block);
  int result = 0;
  auto pass = [&] {
    const int *src = d_first;
    int dst = 0;
    for (int t = 0; t < rows - 1; t += pyramid) {
      int it = std::min(pyramid, rows - 1 - t);
      dynproc<<<blocks, BLOCK>>>(it, d_wall, src, d_buf[dst], cols, t, border);
      src = d_buf[dst];
      result = dst;
      dst ^= 1;
    }
  };
  run.warmup(pass);
  run.time(pass);

  std::vector<int> out(cols);
  CK(cudaMemcpy(out.data(), d_buf[result], cols * sizeof(int), cudaMemcpyDeviceToHost));

  // CPU reference.
  std::vector<int> a(wall.begin(), wall.begin() + cols), b(cols);
  for (int r = 1; r < rows; r++) {
    const int *wr = &wall[(size_t)r * cols];
    for (int c = 0; c < cols; c++) {
      int m = a[c];
      if (c > 0) m = std::min(m, a[c - 1]);
      if (c < cols - 1) m = std::min(m, a[c + 1]);
      b[c] = wr[c] + m;
    }
    a.swap(b);
  }
  size_t bad = 0;
  for (int c = 0; c < cols; c++) {
    if (out[c] != a[c]) {
      if (bad < 5) std::fprintf(stderr, "result[%d]: got %d, want %d\n", c, out[c], a[c]);
      bad++;
    }
  }
  if (bad) std::fprintf(stderr, "pathfinder: %zu of %d results differ\n", bad, cols);

  CK(cudaFree(d_wall));
  CK(cudaFree(d_first));
  CK(cudaFree(d_buf[0]));
  CK(cudaFree(d_buf[1]));
  return run.finish(bad == 0, perf::checksum(out));
}
