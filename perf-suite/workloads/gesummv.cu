// ~4 ms per pass on H100 (measured, plain build): y = alpha*A*x + beta*B*x with A, B 14336 x 14336 fp32 (1.6 GB read), one thread per row.
#include "../harness.h"

// tmp = A x, y = alpha * tmp + beta * B x. One thread per row i.
__global__ void gesummv_kernel(int n, float alpha, float beta, const float *A, const float *B,
                               const float *x, float *tmp, float *y) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    float t = 0.0f, u = 0.0f;
    for (int j = 0; j < n; j++) {
      t += A[i * n + j] * x[j];
      u += B[i * n + j] * x[j];
    }
    tmp[i] = t;
    y[i] = alpha * t + beta * u;
  }
}

static float rms(const std::vector<float> &v) {
  double s = 0;
  for (float x : v) s += (double)x * x;
  return (float)std::sqrt(s / v.size());
}

int main(int argc, char **argv) {
  perf::Run run(argc, argv, "gesummv", 20);
  const int n = 14336;
  const float alpha = 1.5f, beta = 1.2f;

  std::vector<float> hA((size_t)n * n), hB((size_t)n * n), hx(n);
  perf::fill(hA, 71);
  perf::fill(hB, 72);
  perf::fill(hx, 73);

  float *A, *B, *x, *tmp, *y;
  CK(cudaMalloc(&A, hA.size() * sizeof(float)));
  CK(cudaMalloc(&B, hB.size() * sizeof(float)));
  CK(cudaMalloc(&x, n * sizeof(float)));
  CK(cudaMalloc(&tmp, n * sizeof(float)));
  CK(cudaMalloc(&y, n * sizeof(float)));
  CK(cudaMemcpy(A, hA.data(), hA.size() * sizeof(float), cudaMemcpyHostToDevice));
  CK(cudaMemcpy(B, hB.data(), hB.size() * sizeof(float), cudaMemcpyHostToDevice));
  CK(cudaMemcpy(x, hx.data(), n * sizeof(float), cudaMemcpyHostToDevice));

  const int bs = 256;
  auto pass = [&] { gesummv_kernel<<<perf::cdiv(n, bs), bs>>>(n, alpha, beta, A, B, x, tmp, y); };
  run.warmup(pass);
  run.time(pass);

  std::vector<float> htmp(n), hy(n);
  CK(cudaMemcpy(htmp.data(), tmp, n * sizeof(float), cudaMemcpyDeviceToHost));
  CK(cudaMemcpy(hy.data(), y, n * sizeof(float), cudaMemcpyDeviceToHost));

  // Full reference in double.
  std::vector<float> want_t(n), want_y(n);
  for (int i = 0; i < n; i++) {
    const float *a = &hA[(size_t)i * n], *b = &hB[(size_t)i * n];
    double t = 0, u = 0;
    for (int j = 0; j < n; j++) {
      t += (double)a[j] * hx[j];
      u += (double)b[j] * hx[j];
    }
    want_t[i] = (float)t;
    want_y[i] = (float)(alpha * t + beta * u);
  }
  bool ok = perf::close(htmp.data(), want_t.data(), n, 1e-3f, 1e-4f * rms(want_t), "tmp");
  ok = perf::close(hy.data(), want_y.data(), n, 1e-3f, 1e-4f * rms(want_y), "y") && ok;

  CK(cudaFree(A));
  CK(cudaFree(B));
  CK(cudaFree(x));
  CK(cudaFree(tmp));
  CK(cudaFree(y));
  return run.finish(ok, perf::checksum(hy));
}
