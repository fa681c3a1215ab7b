// ~4 ms per pass on H100 (measured, plain build): x1 = x1_0 + A y1 and x2 = x2_0 + A^T y2 with A 16384 x 16384 fp32 (1 GiB read twice).
#include "../harness.h"

// x1 = x1_0 + A y1. One thread per row i. (PolyBench updates x1 in place; here the
// result goes to its own buffer so that every pass computes the same thing.)
__global__ void mvt_kernel1(int n, const float *A, const float *y1, const float *x1_0, float *x1) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    float acc = x1_0[i];
    for (int j = 0; j < n; j++) acc += A[i * n + j] * y1[j];
    x1[i] = acc;
  }
}

// x2 = x2_0 + A^T y2. One thread per column i.
__global__ void mvt_kernel2(int n, const float *A, const float *y2, const float *x2_0, float *x2) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    float acc = x2_0[i];
    for (int j = 0; j < n; j++) acc += A[j * n + i] * y2[j];
    x2[i] = acc;
  }
}

static float rms(const std::vector<float> &v) {
  double s = 0;
  for (float x : v) s += (double)x * x;
  return (float)std::sqrt(s / v.size());
}

int main(int argc, char **argv) {
  perf::Run run(argc, argv, "mvt", 20);
  const int n = 16384;

  std::vector<float> hA((size_t)n * n), hy1(n), hy2(n), hx10(n), hx20(n);
  perf::fill(hA, 61);
  perf::fill(hy1, 62);
  perf::fill(hy2, 63);
  perf::fill(hx10, 64);
  perf::fill(hx20, 65);

  float *A, *y1, *y2, *x10, *x20, *x1, *x2;
  CK(cudaMalloc(&A, hA.size() * sizeof(float)));
  CK(cudaMalloc(&y1, n * sizeof(float)));
  CK(cudaMalloc(&y2, n * sizeof(float)));
  CK(cudaMalloc(&x10, n * sizeof(float)));
  CK(cudaMalloc(&x20, n * sizeof(float)));
  CK(cudaMalloc(&x1, n * sizeof(float)));
  CK(cudaMalloc(&x2, n * sizeof(float)));
  CK(cudaMemcpy(A, hA.data(), hA.size() * sizeof(float), cudaMemcpyHostToDevice));
  CK(cudaMemcpy(y1, hy1.data(), n * sizeof(float), cudaMemcpyHostToDevice));
  CK(cudaMemcpy(y2, hy2.data(), n * sizeof(float), cudaMemcpyHostToDevice));
  CK(cudaMemcpy(x10, hx10.data(), n * sizeof(float), cudaMemcpyHostToDevice));
  CK(cudaMemcpy(x20, hx20.data(), n * sizeof(float), cudaMemcpyHostToDevice));

  const int bs = 256;
  auto pass = [&] {
    mvt_kernel1<<<perf::cdiv(n, bs), bs>>>(n, A, y1, x10, x1);
    mvt_kernel2<<<perf::cdiv(n, bs), bs>>>(n, A, y2, x20, x2);
  };
  run.warmup(pass);
  run.time(pass);

  std::vector<float> hx1(n), hx2(n);
  CK(cudaMemcpy(hx1.data(), x1, n * sizeof(float), cudaMemcpyDeviceToHost));
  CK(cudaMemcpy(hx2.data(), x2, n * sizeof(float), cudaMemcpyDeviceToHost));

  // Full reference in double, one row-major sweep for both products.
  std::vector<double> r1(n), r2(hx20.begin(), hx20.end());
  for (int i = 0; i < n; i++) {
    const float *a = &hA[(size_t)i * n];
    double acc = hx10[i], yi = hy2[i];
    for (int j = 0; j < n; j++) {
      acc += (double)a[j] * hy1[j];
      r2[j] += a[j] * yi;
    }
    r1[i] = acc;
  }
  std::vector<float> want1(r1.begin(), r1.end()), want2(r2.begin(), r2.end());
  bool ok = perf::close(hx1.data(), want1.data(), n, 1e-3f, 1e-4f * rms(want1), "x1");
  ok = perf::close(hx2.data(), want2.data(), n, 1e-3f, 1e-4f * rms(want2), "x2") && ok;

  std::vector<float> both(hx1);
  both.insert(both.end(), hx2.begin(), hx2.end());
  CK(cudaFree(A));
  CK(cudaFree(y1));
  CK(cudaFree(y2));
  CK(cudaFree(x10));
  CK(cudaFree(x20));
  CK(cudaFree(x1));
  CK(cudaFree(x2));
  return run.finish(ok, perf::checksum(both));
}
