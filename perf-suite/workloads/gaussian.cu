// ~18 ms per pass on H100 (measured): 2048x2048 system, 2 x 2047 elimination launches (launch/latency bound, matrix in L2); 300 passes ~ 5.6 s: launch-bound, its time per pass follows the host's launch rate, which swings over a few passes (results/2026-11-25-h100-perf-11)
// Rodinia gaussian: forward elimination without pivoting. For each pivot t, Fan1 computes
// the multipliers of column t and Fan2 updates the trailing rows of the matrix and the
// right-hand side (16x16 blocks; x runs along columns so the accesses coalesce). Each pass
// first restores A and b from read-only copies (a device kernel). The host then does the
// back substitution (as Rodinia does) and the solution is compared with the known x.
#include "../harness.h"

#include <vector>

// Fuse a*b+c into FMAs within one expression only. CUDA's default (-ffp-contract=fast)
// also fuses across statements in the backend, which depends on the basic-block layout
// and so gives the plain and the instrumented builds different low-order bits.
#pragma clang fp contract(on)

namespace {

__global__ void restore(const float *a0, float *a, const float *b0, float *b, int n) {
  size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
  size_t nn = (size_t)n * n;
  if (i < nn) a[i] = a0[i];
  if (i < (size_t)n) b[i] = b0[i];
}

// Multipliers of pivot column t for rows t+1 .. n-1.
__global__ void fan1(float *m, const float *a, int n, int t) {
  int k = blockIdx.x * blockDim.x + threadIdx.x;
  if (k >= n - 1 - t) return;
  int row = t + 1 + k;
  m[(size_t)row * n + t] = a[(size_t)row * n + t] / a[(size_t)t * n + t];
}

// Rows t+1 .. n-1, columns t .. n-1: a[row][col] -= m[row][t] * a[t][col]; and b.
__global__ void fan2(const float *m, float *a, float *b, int n, int t) {
  int col = t + blockIdx.x * blockDim.x + threadIdx.x;
  int row = t + 1 + blockIdx.y * blockDim.y + threadIdx.y;
  if (col >= n || row >= n) return;
  float mult = m[(size_t)row * n + t];
  a[(size_t)row * n + col] -= mult * a[(size_t)t * n + col];
  if (col == t) b[row] -= mult * b[t];
}

} // namespace

int main(int argc, char **argv) {
  perf::Run run(argc, argv, "gaussian", 300);
  const int n = 2048;
  const size_t nn = (size_t)n * n;

  // Diagonally dominant A (no pivoting needed), known solution x, b = A x.
  std::vector<float> a(nn), x_true(n), b(n);
  perf::fill(a, 81, -1.0f, 1.0f);
  for (int i = 0; i < n; i++) a[(size_t)i * n + i] += (float)n;
  perf::fill(x_true, 82, -1.0f, 1.0f);
  for (int i = 0; i < n; i++) {
    double s = 0;
    for (int j = 0; j < n; j++) s += (double)a[(size_t)i * n + j] * x_true[j];
    b[i] = (float)s;
  }

  float *d_a0, *d_a, *d_b0, *d_b, *d_m;
  CK(cudaMalloc(&d_a0, nn * sizeof(float)));
  CK(cudaMalloc(&d_a, nn * sizeof(float)));
  CK(cudaMalloc(&d_m, nn * sizeof(float)));
  CK(cudaMalloc(&d_b0, n * sizeof(float)));
  CK(cudaMalloc(&d_b, n * sizeof(float)));
  CK(cudaMemcpy(d_a0, a.data(), nn * sizeof(float), cudaMemcpyHostToDevice));
  CK(cudaMemcpy(d_b0, b.data(), n * sizeof(float), cudaMemcpyHostToDevice));
  CK(cudaMemset(d_m, 0, nn * sizeof(float)));

  const dim3 block2(16, 16);
  auto pass = [&] {
    restore<<<perf::cdiv(nn, 256), 256>>>(d_a0, d_a, d_b0, d_b, n);
    for (int t = 0; t < n - 1; t++) {
      fan1<<<perf::cdiv(n - 1 - t, 256), 256>>>(d_m, d_a, n, t);
      dim3 grid2(perf::cdiv(n - t, 16), perf::cdiv(n - 1 - t, 16));
      fan2<<<grid2, block2>>>(d_m, d_a, d_b, n, t);
    }
  };
  run.warmup(pass);
  run.time(pass);

  std::vector<float> ua(nn), ub(n);
  CK(cudaMemcpy(ua.data(), d_a, nn * sizeof(float), cudaMemcpyDeviceToHost));
  CK(cudaMemcpy(ub.data(), d_b, n * sizeof(float), cudaMemcpyDeviceToHost));

  // Back substitution (host, untimed, as in Rodinia).
  std::vector<float> x(n);
  for (int i = n - 1; i >= 0; i--) {
    double s = ub[i];
    for (int j = i + 1; j < n; j++) s -= (double)ua[(size_t)i * n + j] * x[j];
    x[i] = (float)(s / ua[(size_t)i * n + i]);
  }
  bool ok = perf::close(x.data(), x_true.data(), n, 1e-3f, 1e-4f, "x");
  // The eliminated part must be (numerically) zero: catches a Fan2 that skips column t.
  float worst = 0.0f;
  for (int i = 1; i < n; i += 7)
    for (int j = 0; j < i; j += 5) worst = std::fmax(worst, std::fabs(ua[(size_t)i * n + j]));
  if (!(worst < 1e-3f)) {
    std::fprintf(stderr, "gaussian: below-diagonal entry %g not eliminated\n", worst);
    ok = false;
  }

  CK(cudaFree(d_a0));
  CK(cudaFree(d_a));
  CK(cudaFree(d_m));
  CK(cudaFree(d_b0));
  CK(cudaFree(d_b));
  return run.finish(ok, perf::checksum(x));
}
