// ~7 ms per pass on H100 (measured, plain build): lower triangle of C = alpha*A*A^T + beta*C0, A 4096 x 3072 fp32 (52 GFLOP), 32x32 shared tiles.
#include "../harness.h"

#define TILE 32

// C[i][j] = alpha * sum_k A[i][k] * A[j][k] + beta * C0[i][j] for j <= i; A is n x m.
// Tiles wholly above the diagonal exit at once; the upper triangle of C is not written.
// __launch_bounds__: one thread per tile element needs 1024-thread blocks.
__global__ void __launch_bounds__(TILE * TILE)
    syrk_tiled(int n, int m, float alpha, float beta, const float *A, const float *C0, float *C) {
  if (blockIdx.x > blockIdx.y) return; // the whole tile lies above the diagonal
  __shared__ float Ai[TILE][TILE + 1];
  __shared__ float Aj[TILE][TILE + 1];
  int tx = threadIdx.x, ty = threadIdx.y;
  int i = blockIdx.y * TILE + ty;
  int j = blockIdx.x * TILE + tx;
  int jrow = blockIdx.x * TILE + ty; // the row of A this thread loads for the j side
  float acc = 0.0f;
  for (int k0 = 0; k0 < m; k0 += TILE) {
    Ai[ty][tx] = (i < n && k0 + tx < m) ? A[i * m + k0 + tx] : 0.0f;
    Aj[ty][tx] = (jrow < n && k0 + tx < m) ? A[jrow * m + k0 + tx] : 0.0f;
    __syncthreads();
    for (int k = 0; k < TILE; k++) acc += Ai[ty][k] * Aj[tx][k];
    __syncthreads();
  }
  if (i < n && j <= i) C[i * n + j] = alpha * acc + beta * C0[i * n + j];
}

int main(int argc, char **argv) {
  perf::Run run(argc, argv, "syrk", 10);
  const int n = 4096, m = 3072;
  const float alpha = 1.5f, beta = 1.2f;

  std::vector<float> hA((size_t)n * m), hC0((size_t)n * n);
  perf::fill(hA, 81);
  perf::fill(hC0, 82);

  float *A, *C0, *C;
  CK(cudaMalloc(&A, hA.size() * sizeof(float)));
  CK(cudaMalloc(&C0, hC0.size() * sizeof(float)));
  CK(cudaMalloc(&C, hC0.size() * sizeof(float)));
  CK(cudaMemcpy(A, hA.data(), hA.size() * sizeof(float), cudaMemcpyHostToDevice));
  CK(cudaMemcpy(C0, hC0.data(), hC0.size() * sizeof(float), cudaMemcpyHostToDevice));
  // The upper triangle keeps C0's values.
  CK(cudaMemcpy(C, C0, hC0.size() * sizeof(float), cudaMemcpyDeviceToDevice));

  dim3 block(TILE, TILE);
  dim3 grid(perf::cdiv(n, TILE), perf::cdiv(n, TILE));
  auto pass = [&] { syrk_tiled<<<grid, block>>>(n, m, alpha, beta, A, C0, C); };
  run.warmup(pass);
  run.time(pass);

  std::vector<float> hC(hC0.size());
  CK(cudaMemcpy(hC.data(), C, hC.size() * sizeof(float), cudaMemcpyDeviceToHost));

  // Reference: 512 positions in double, mostly in the lower triangle (corners, then
  // random; every eighth one anywhere, so some fall in the untouched upper triangle).
  const int samples = 512;
  int ci[4] = {0, n - 1, n - 1, 0}, cj[4] = {0, 0, n - 1, n - 1};
  perf::Rng r(83);
  std::vector<float> got(samples), want(samples);
  for (int s = 0; s < samples; s++) {
    int i, j;
    if (s < 4) {
      i = ci[s];
      j = cj[s];
    } else if (s % 8 == 7) {
      i = (int)r.below(n);
      j = (int)r.below(n);
    } else {
      i = (int)r.below(n);
      j = (int)r.below(i + 1);
    }
    double v = hC0[(size_t)i * n + j];
    if (j <= i) {
      double acc = 0;
      for (int k = 0; k < m; k++) acc += (double)hA[(size_t)i * m + k] * hA[(size_t)j * m + k];
      v = alpha * acc + beta * v;
    }
    want[s] = (float)v;
    got[s] = hC[(size_t)i * n + j];
  }
  // Off-diagonal entries are about 1.5 * sqrt(m / 9) = 28 in size, diagonal ones 1.5 * m / 3.
  bool ok = perf::close(got.data(), want.data(), samples, 1e-3f, 1e-2f, "C");

  CK(cudaFree(A));
  CK(cudaFree(C0));
  CK(cudaFree(C));
  return run.finish(ok, perf::checksum(hC));
}
