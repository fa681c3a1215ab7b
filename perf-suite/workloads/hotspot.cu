// ~1.9 ms per pass on H100 (measured): 4096x4096 grid, 20 time steps as 10 launches of a 16x16 pyramid (height 2); 40 passes ~ 75 ms
// Rodinia hotspot: transient thermal simulation of a chip, 2D 5-point stencil with a power
// term. Each block loads a 16x16 tile of temperature and power into shared memory and
// advances it `pyramid` steps in place, shrinking the valid region by one cell per step
// (the "ghost zone" pyramid), then writes the inner (16 - 2*pyramid)^2 cells.
// Each pass starts from the same read-only initial temperatures (first launch reads them)
// and ping-pongs between two buffers, so the CPU reference runs one pass.
#include "../harness.h"

#include <algorithm>
#include <vector>

// Fuse a*b+c into FMAs within one expression only. CUDA's default (-ffp-contract=fast)
// also fuses across statements in the backend, which depends on the basic-block layout
// and so gives the plain and the instrumented builds different low-order bits.
#pragma clang fp contract(on)

namespace {

constexpr int BS = 16;
constexpr float AMB_TEMP = 80.0f;

__device__ __forceinline__ bool in_range(int x, int lo, int hi) { return x >= lo && x <= hi; }

__global__ void calculate_temp(int iteration, const float *power, const float *temp_src,
                               float *temp_dst, int cols, int rows, int border_cols,
                               int border_rows, float step_div_cap, float rx_1, float ry_1,
                               float rz_1) {
  __shared__ float temp_on[BS][BS];
  __shared__ float power_on[BS][BS];
  __shared__ float temp_t[BS][BS];

  int bx = blockIdx.x, by = blockIdx.y;
  int tx = threadIdx.x, ty = threadIdx.y;

  // The valid output region of this launch shrinks by one cell per step on each side.
  int small_block_rows = BS - iteration * 2;
  int small_block_cols = BS - iteration * 2;

  // Top-left corner of the tile in the grid (may lie outside it).
  int blk_y = small_block_rows * by - border_rows;
  int blk_x = small_block_cols * bx - border_cols;
  int blk_y_max = blk_y + BS - 1;
  int blk_x_max = blk_x + BS - 1;

  int yidx = blk_y + ty;
  int xidx = blk_x + tx;
  bool inside = in_range(yidx, 0, rows - 1) && in_range(xidx, 0, cols - 1);
  int index = inside ? cols * yidx + xidx : 0;
  if (inside) {
    temp_on[ty][tx] = temp_src[index];
    power_on[ty][tx] = power[index];
  }
  __syncthreads();

  // Tile cells that lie inside the grid.
  int valid_y_min = blk_y < 0 ? -blk_y : 0;
  int valid_y_max = blk_y_max > rows - 1 ? BS - 1 - (blk_y_max - rows + 1) : BS - 1;
  int valid_x_min = blk_x < 0 ? -blk_x : 0;
  int valid_x_max = blk_x_max > cols - 1 ? BS - 1 - (blk_x_max - cols + 1) : BS - 1;

  // Neighbours, clamped at the grid edge (the edge cell reuses itself).
  int n = max(ty - 1, valid_y_min);
  int s = min(ty + 1, valid_y_max);
  int w = max(tx - 1, valid_x_min);
  int e = min(tx + 1, valid_x_max);

  bool computed = false;
  for (int i = 0; i < iteration; i++) {
    computed = false;
    if (in_range(tx, i + 1, BS - i - 2) && in_range(ty, i + 1, BS - i - 2) &&
        in_range(tx, valid_x_min, valid_x_max) && in_range(ty, valid_y_min, valid_y_max)) {
      computed = true;
      float t = temp_on[ty][tx];
      temp_t[ty][tx] = t + step_div_cap * (power_on[ty][tx] +
                                           (temp_on[s][tx] + temp_on[n][tx] - 2.0f * t) * ry_1 +
                                           (temp_on[ty][e] + temp_on[ty][w] - 2.0f * t) * rx_1 +
                                           (AMB_TEMP - t) * rz_1);
    }
    __syncthreads();
    if (i == iteration - 1) break;
    if (computed) temp_on[ty][tx] = temp_t[ty][tx];
    __syncthreads();
  }
  // Cells computed in the last step are exactly this block's share of the output.
  if (computed) temp_dst[index] = temp_t[ty][tx];
}

} // namespace

int main(int argc, char **argv) {
  perf::Run run(argc, argv, "hotspot", 40);
  const int rows = 4096, cols = 4096;
  const int steps = 20;  // time steps per pass
  const int pyramid = 2; // steps per launch
  const size_t n = (size_t)rows * cols;

  // Rodinia's constants. The chip is scaled with the grid so that each cell has the size
  // of a cell of Rodinia's 1024x1024 input (the explicit scheme stays stable).
  const double max_pd = 3.0e6, precision = 0.001, spec_heat_si = 1.75e6, k_si = 100,
               factor_chip = 0.5, t_chip = 0.0005;
  const double chip_height = 0.016 * rows / 1024.0, chip_width = 0.016 * cols / 1024.0;
  const double grid_height = chip_height / rows, grid_width = chip_width / cols;
  const double cap = factor_chip * spec_heat_si * t_chip * grid_width * grid_height;
  const double rx = grid_width / (2.0 * k_si * t_chip * grid_height);
  const double ry = grid_height / (2.0 * k_si * t_chip * grid_width);
  const double rz = t_chip / (k_si * grid_height * grid_width);
  const double max_slope = max_pd / (factor_chip * t_chip * spec_heat_si);
  const double step = precision / max_slope;
  const float step_div_cap = (float)(step / cap), rx_1 = (float)(1.0 / rx),
              ry_1 = (float)(1.0 / ry), rz_1 = (float)(1.0 / rz);

  std::vector<float> temp(n), power(n);
  perf::fill(temp, 11, 300.0f, 340.0f);
  perf::fill(power, 12, 0.0f, 0.5f);

  float *d_temp_init, *d_power, *d_buf[2];
  CK(cudaMalloc(&d_temp_init, n * sizeof(float)));
  CK(cudaMalloc(&d_power, n * sizeof(float)));
  CK(cudaMalloc(&d_buf[0], n * sizeof(float)));
  CK(cudaMalloc(&d_buf[1], n * sizeof(float)));
  CK(cudaMemcpy(d_temp_init, temp.data(), n * sizeof(float), cudaMemcpyHostToDevice));
  CK(cudaMemcpy(d_power, power.data(), n * sizeof(float), cudaMemcpyHostToDevice));

  const int border = pyramid; // halo width on each side
  const int small_block = BS - 2 * pyramid;
  const dim3 grid(perf::cdiv(cols, small_block), perf::cdiv(rows, small_block));
  const dim3 block(BS, BS);
  int result = 0; // which buffer holds the last pass's output
  auto pass = [&] {
    const float *src = d_temp_init;
    int dst = 0;
    for (int t = 0; t < steps; t += pyramid) {
      int it = std::min(pyramid, steps - t);
      calculate_temp<<<grid, block>>>(it, d_power, src, d_buf[dst], cols, rows, border, border,
                                      step_div_cap, rx_1, ry_1, rz_1);
      src = d_buf[dst];
      result = dst;
      dst ^= 1;
    }
  };
  run.warmup(pass);
  run.time(pass);

  std::vector<float> out(n);
  CK(cudaMemcpy(out.data(), d_buf[result], n * sizeof(float), cudaMemcpyDeviceToHost));

  // CPU reference: the same explicit update, neighbours clamped at the edges.
  std::vector<float> a(temp), b(n);
  for (int t = 0; t < steps; t++) {
    for (int r = 0; r < rows; r++) {
      const float *rowc = &a[(size_t)r * cols];
      const float *rown = &a[(size_t)(r > 0 ? r - 1 : 0) * cols];
      const float *rows_ = &a[(size_t)(r < rows - 1 ? r + 1 : rows - 1) * cols];
      const float *pw = &power[(size_t)r * cols];
      float *o = &b[(size_t)r * cols];
      for (int c = 0; c < cols; c++) {
        int w = c > 0 ? c - 1 : 0, e = c < cols - 1 ? c + 1 : cols - 1;
        float tc = rowc[c];
        o[c] = tc + step_div_cap * (pw[c] + (rows_[c] + rown[c] - 2.0f * tc) * ry_1 +
                                    (rowc[e] + rowc[w] - 2.0f * tc) * rx_1 +
                                    (AMB_TEMP - tc) * rz_1);
      }
    }
    a.swap(b);
  }

  bool ok = perf::close(out.data(), a.data(), n, 1e-6f, 2e-3f, "temp");
  CK(cudaFree(d_temp_init));
  CK(cudaFree(d_power));
  CK(cudaFree(d_buf[0]));
  CK(cudaFree(d_buf[1]));
  return run.finish(ok, perf::checksum(out));
}
