// ~16 ms per pass on H100 (measured): 4096x4096 LU (no pivoting), 256 block steps x 3 kernels (~11 GB of trailing-matrix traffic); 4 passes ~ 62 ms
// Rodinia lud: blocked in-place LU decomposition with 16x16 tiles. For each diagonal
// block: lud_diagonal factorises it in shared memory, lud_perimeter solves the block row
// (U) and block column (L) against it, and lud_internal updates the trailing matrix with
// one 16x16 shared-memory tile product per block. Each pass first restores the matrix from
// a read-only copy (a device kernel). Verified by multiplying L*U back on a deterministic
// grid of sampled entries (as Rodinia's verify does) and comparing with the input.
#include "../harness.h"

#include <vector>

// Fuse a*b+c into FMAs within one expression only. CUDA's default (-ffp-contract=fast)
// also fuses across statements in the backend, which depends on the basic-block layout
// and so gives the plain and the instrumented builds different low-order bits.
#pragma clang fp contract(on)

namespace {

constexpr int BS = 16;

__global__ void copy_matrix(const float *src, float *dst, size_t n) {
  size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) dst[i] = src[i];
}

// One block of BS threads factorises the diagonal tile at (offset, offset).
__global__ void lud_diagonal(float *m, int dim, int offset) {
  __shared__ float shadow[BS][BS];
  int tx = threadIdx.x;
  size_t base = (size_t)offset * dim + offset;
  for (int i = 0; i < BS; i++) shadow[i][tx] = m[base + (size_t)i * dim + tx];
  __syncthreads();
  for (int i = 0; i < BS - 1; i++) {
    if (tx > i) { // column i of L
      for (int j = 0; j < i; j++) shadow[tx][i] -= shadow[tx][j] * shadow[j][i];
      shadow[tx][i] /= shadow[i][i];
    }
    __syncthreads();
    if (tx > i) { // row i+1 of U
      for (int j = 0; j < i + 1; j++) shadow[i + 1][tx] -= shadow[i + 1][j] * shadow[j][tx];
    }
    __syncthreads();
  }
  // Row 0 is unchanged.
  for (int i = 1; i < BS; i++) m[base + (size_t)i * dim + tx] = shadow[i][tx];
}

// Block b solves the tiles right of and below the diagonal tile: threads 0..BS-1 the row
// tile (L^-1 A, forward substitution by column), threads BS..2BS-1 the column tile
// (A U^-1, by row).
__global__ void lud_perimeter(float *m, int dim, int offset) {
  __shared__ float dia[BS][BS];
  __shared__ float peri_row[BS][BS];
  __shared__ float peri_col[BS][BS];
  int bx = blockIdx.x, tx = threadIdx.x;
  size_t diag = (size_t)offset * dim + offset;
  size_t row_tile = diag + (size_t)(bx + 1) * BS;        // (offset, offset + (bx+1)*BS)
  size_t col_tile = diag + (size_t)(bx + 1) * BS * dim; // (offset + (bx+1)*BS, offset)
  if (tx < BS) {
    int idx = tx;
    for (int i = 0; i < BS / 2; i++) dia[i][idx] = m[diag + (size_t)i * dim + idx];
    for (int i = 0; i < BS; i++) peri_row[i][idx] = m[row_tile + (size_t)i * dim + idx];
  } else {
    int idx = tx - BS;
    for (int i = BS / 2; i < BS; i++) dia[i][idx] = m[diag + (size_t)i * dim + idx];
    for (int i = 0; i < BS; i++) peri_col[i][idx] = m[col_tile + (size_t)i * dim + idx];
  }
  __syncthreads();
  if (tx < BS) {
    int idx = tx;
    for (int i = 1; i < BS; i++)
      for (int j = 0; j < i; j++) peri_row[i][idx] -= dia[i][j] * peri_row[j][idx];
  } else {
    int idx = tx - BS;
    for (int i = 0; i < BS; i++) {
      for (int j = 0; j < i; j++) peri_col[idx][i] -= peri_col[idx][j] * dia[j][i];
      peri_col[idx][i] /= dia[i][i];
    }
  }
  __syncthreads();
  if (tx < BS) {
    int idx = tx;
    for (int i = 1; i < BS; i++) m[row_tile + (size_t)i * dim + idx] = peri_row[i][idx];
  } else {
    int idx = tx - BS;
    for (int i = 0; i < BS; i++) m[col_tile + (size_t)i * dim + idx] = peri_col[i][idx];
  }
}

// Trailing update: tile (by+1, bx+1) -= L tile (by+1, 0) * U tile (0, bx+1).
__global__ void lud_internal(float *m, int dim, int offset) {
  __shared__ float peri_row[BS][BS];
  __shared__ float peri_col[BS][BS];
  int bx = blockIdx.x, by = blockIdx.y, tx = threadIdx.x, ty = threadIdx.y;
  int global_row = offset + (by + 1) * BS;
  int global_col = offset + (bx + 1) * BS;
  peri_row[ty][tx] = m[(size_t)(offset + ty) * dim + global_col + tx];
  peri_col[ty][tx] = m[(size_t)(global_row + ty) * dim + offset + tx];
  __syncthreads();
  float sum = 0.0f;
  for (int i = 0; i < BS; i++) sum += peri_col[ty][i] * peri_row[i][tx];
  m[(size_t)(global_row + ty) * dim + global_col + tx] -= sum;
}

} // namespace

int main(int argc, char **argv) {
  perf::Run run(argc, argv, "lud", 4);
  const int dim = 4096; // a multiple of BS
  const size_t n = (size_t)dim * dim;

  // Positive entries with a dominant diagonal: stable without pivoting, and the trailing
  // updates change every entry noticeably.
  std::vector<float> a(n);
  perf::fill(a, 61, 0.0f, 1.0f);
  for (int i = 0; i < dim; i++) a[(size_t)i * dim + i] += (float)dim;

  float *d_a0, *d_m;
  CK(cudaMalloc(&d_a0, n * sizeof(float)));
  CK(cudaMalloc(&d_m, n * sizeof(float)));
  CK(cudaMemcpy(d_a0, a.data(), n * sizeof(float), cudaMemcpyHostToDevice));

  auto pass = [&] {
    copy_matrix<<<perf::cdiv(n, 256), 256>>>(d_a0, d_m, n);
    int it = 0;
    for (; it < dim - BS; it += BS) {
      lud_diagonal<<<1, BS>>>(d_m, dim, it);
      int rest = (dim - it) / BS - 1;
      lud_perimeter<<<rest, 2 * BS>>>(d_m, dim, it);
      lud_internal<<<dim3(rest, rest), dim3(BS, BS)>>>(d_m, dim, it);
    }
    lud_diagonal<<<1, BS>>>(d_m, dim, it);
  };
  run.warmup(pass);
  run.time(pass);

  std::vector<float> lu(n);
  CK(cudaMemcpy(lu.data(), d_m, n * sizeof(float), cudaMemcpyDeviceToHost));

  // (L*U)[i][j] = sum_{k <= min(i,j)} L[i][k] U[k][j], L unit lower, on a 256x256 grid of
  // rows and columns that covers every tile row/column at varying positions within tiles.
  const int samples = dim / BS;
  std::vector<int> ri(samples), cj(samples);
  for (int k = 0; k < samples; k++) {
    ri[k] = k * BS + (k * 7) % BS;
    cj[k] = k * BS + (k * 11 + 3) % BS;
  }
  std::vector<float> got(samples * samples), want(samples * samples);
  for (int x = 0; x < samples; x++) {
    int i = ri[x];
    for (int y = 0; y < samples; y++) {
      int j = cj[y];
      int kmax = i < j ? i : j;
      double s = 0;
      for (int k = 0; k <= kmax; k++) {
        double l = k == i ? 1.0 : (double)lu[(size_t)i * dim + k];
        s += l * (double)lu[(size_t)k * dim + j];
      }
      got[x * samples + y] = (float)s;
      want[x * samples + y] = a[(size_t)i * dim + j];
    }
  }
  bool ok = perf::close(got.data(), want.data(), got.size(), 1e-4f, 1e-4f, "L*U");
  // And the factors themselves must not be the input (a no-op would pass the product test
  // only if L were the identity, which it is not for this matrix; check one entry anyway).
  if (lu[(size_t)(dim - 1) * dim] == a[(size_t)(dim - 1) * dim]) {
    std::fprintf(stderr, "lud: L[dim-1][0] was not computed\n");
    ok = false;
  }

  CK(cudaFree(d_a0));
  CK(cudaFree(d_m));
  return run.finish(ok, perf::checksum(lu));
}
