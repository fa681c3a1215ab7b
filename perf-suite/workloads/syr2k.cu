// ~17 ms per pass on H100 (measured, plain build): lower triangle of C = alpha*(A*B^T + B*A^T) + beta*C0, A, B 2048 x 1024 fp32 (8.6 GFLOP), naive.
#include "../harness.h"

// C[i][j] = alpha * sum_k (A[i][k] * B[j][k] + B[i][k] * A[j][k]) + beta * C0[i][j] for j <= i.
// A and B are n x m. One thread per element; threads above the diagonal do nothing.
__global__ void syr2k_kernel(int n, int m, float alpha, float beta, const float *A, const float *B,
                             const float *C0, float *C) {
  int j = blockIdx.x * blockDim.x + threadIdx.x;
  int i = blockIdx.y * blockDim.y + threadIdx.y;
  if (i < n && j <= i) {
    float acc = 0.0f;
    for (int k = 0; k < m; k++) acc += A[i * m + k] * B[j * m + k] + B[i * m + k] * A[j * m + k];
    C[i * n + j] = alpha * acc + beta * C0[i * n + j];
  }
}

int main(int argc, char **argv) {
  perf::Run run(argc, argv, "syr2k", 5);
  const int n = 2048, m = 1024;
  const float alpha = 1.5f, beta = 1.2f;

  std::vector<float> hA((size_t)n * m), hB((size_t)n * m), hC0((size_t)n * n);
  perf::fill(hA, 91);
  perf::fill(hB, 92);
  perf::fill(hC0, 93);

  float *A, *B, *C0, *C;
  CK(cudaMalloc(&A, hA.size() * sizeof(float)));
  CK(cudaMalloc(&B, hB.size() * sizeof(float)));
  CK(cudaMalloc(&C0, hC0.size() * sizeof(float)));
  CK(cudaMalloc(&C, hC0.size() * sizeof(float)));
  CK(cudaMemcpy(A, hA.data(), hA.size() * sizeof(float), cudaMemcpyHostToDevice));
  CK(cudaMemcpy(B, hB.data(), hB.size() * sizeof(float), cudaMemcpyHostToDevice));
  CK(cudaMemcpy(C0, hC0.data(), hC0.size() * sizeof(float), cudaMemcpyHostToDevice));
  // The upper triangle keeps C0's values.
  CK(cudaMemcpy(C, C0, hC0.size() * sizeof(float), cudaMemcpyDeviceToDevice));

  dim3 block(32, 8);
  dim3 grid(perf::cdiv(n, block.x), perf::cdiv(n, block.y));
  auto pass = [&] { syr2k_kernel<<<grid, block>>>(n, m, alpha, beta, A, B, C0, C); };
  run.warmup(pass);
  run.time(pass);

  std::vector<float> hC(hC0.size());
  CK(cudaMemcpy(hC.data(), C, hC.size() * sizeof(float), cudaMemcpyDeviceToHost));

  // Reference: 512 positions in double, mostly in the lower triangle (corners, then
  // random; every eighth one anywhere, so some fall in the untouched upper triangle).
  const int samples = 512;
  int ci[4] = {0, n - 1, n - 1, 0}, cj[4] = {0, 0, n - 1, n - 1};
  perf::Rng r(94);
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
      for (int k = 0; k < m; k++)
        acc += (double)hA[(size_t)i * m + k] * hB[(size_t)j * m + k] +
               (double)hB[(size_t)i * m + k] * hA[(size_t)j * m + k];
      v = alpha * acc + beta * v;
    }
    want[s] = (float)v;
    got[s] = hC[(size_t)i * n + j];
  }
  // Entries are about 1.5 * sqrt(2 * m / 9) = 23 in size.
  bool ok = perf::close(got.data(), want.data(), samples, 1e-3f, 1e-2f, "C");

  CK(cudaFree(A));
  CK(cudaFree(B));
  CK(cudaFree(C0));
  CK(cudaFree(C));
  return run.finish(ok, perf::checksum(hC));
}
