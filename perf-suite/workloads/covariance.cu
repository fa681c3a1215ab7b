// ~7 ms per pass on H100 (measured, plain build): covariance of 3072 variables over 3072 samples, fp32 (mean, centre, 14.5 G multiply-adds).
#include "../harness.h"

// mean[j] = sum_i data[i][j] / n; data is n (samples) x m (variables). One thread per column.
__global__ void mean_kernel(int n, int m, float float_n, const float *data, float *mean) {
  int j = blockIdx.x * blockDim.x + threadIdx.x;
  if (j < m) {
    float acc = 0.0f;
    for (int i = 0; i < n; i++) acc += data[i * m + j];
    mean[j] = acc / float_n;
  }
}

// cdata = data - mean (PolyBench centres in place; a separate buffer keeps passes alike).
__global__ void center_kernel(int n, int m, const float *data, const float *mean, float *cdata) {
  int j = blockIdx.x * blockDim.x + threadIdx.x;
  int i = blockIdx.y * blockDim.y + threadIdx.y;
  if (i < n && j < m) cdata[i * m + j] = data[i * m + j] - mean[j];
}

// cov[j1][j2] = cov[j2][j1] = sum_i cdata[i][j1] * cdata[i][j2] / (n - 1), for j2 >= j1.
__global__ void covar_kernel(int n, int m, float float_n, const float *cdata, float *cov) {
  int j2 = blockIdx.x * blockDim.x + threadIdx.x;
  int j1 = blockIdx.y * blockDim.y + threadIdx.y;
  if (j1 < m && j2 < m && j2 >= j1) {
    float acc = 0.0f;
    for (int i = 0; i < n; i++) acc += cdata[i * m + j1] * cdata[i * m + j2];
    acc /= float_n - 1.0f;
    cov[j1 * m + j2] = acc;
    cov[j2 * m + j1] = acc;
  }
}

int main(int argc, char **argv) {
  perf::Run run(argc, argv, "covariance", 10);
  const int n = 3072, m = 3072; // samples, variables
  const float float_n = (float)n;

  std::vector<float> hdata((size_t)n * m);
  perf::fill(hdata, 101, 0.0f, 1.0f);

  float *data, *mean, *cdata, *cov;
  CK(cudaMalloc(&data, hdata.size() * sizeof(float)));
  CK(cudaMalloc(&mean, m * sizeof(float)));
  CK(cudaMalloc(&cdata, hdata.size() * sizeof(float)));
  CK(cudaMalloc(&cov, (size_t)m * m * sizeof(float)));
  CK(cudaMemcpy(data, hdata.data(), hdata.size() * sizeof(float), cudaMemcpyHostToDevice));

  const int bs = 256;
  dim3 block(32, 8);
  dim3 grid_c(perf::cdiv(m, block.x), perf::cdiv(n, block.y));
  dim3 grid_v(perf::cdiv(m, block.x), perf::cdiv(m, block.y));
  auto pass = [&] {
    mean_kernel<<<perf::cdiv(m, bs), bs>>>(n, m, float_n, data, mean);
    center_kernel<<<grid_c, block>>>(n, m, data, mean, cdata);
    covar_kernel<<<grid_v, block>>>(n, m, float_n, cdata, cov);
  };
  run.warmup(pass);
  run.time(pass);

  std::vector<float> hmean(m), hcov((size_t)m * m);
  CK(cudaMemcpy(hmean.data(), mean, m * sizeof(float), cudaMemcpyDeviceToHost));
  CK(cudaMemcpy(hcov.data(), cov, hcov.size() * sizeof(float), cudaMemcpyDeviceToHost));

  // Reference in double: all means, then 512 covariance entries (corners, diagonal
  // ones, random ones on either side of the diagonal).
  std::vector<double> rmean(m, 0.0);
  for (int i = 0; i < n; i++)
    for (int j = 0; j < m; j++) rmean[j] += hdata[(size_t)i * m + j];
  for (int j = 0; j < m; j++) rmean[j] /= n;
  std::vector<float> want_mean(rmean.begin(), rmean.end());
  bool ok = perf::close(hmean.data(), want_mean.data(), m, 1e-4f, 1e-6f, "mean");

  const int samples = 512;
  int c1[4] = {0, 0, m - 1, m - 1}, c2[4] = {0, m - 1, 0, m - 1};
  perf::Rng r(102);
  std::vector<float> got(samples), want(samples);
  for (int s = 0; s < samples; s++) {
    int j1 = s < 4 ? c1[s] : (int)r.below(m);
    int j2 = s < 4 ? c2[s] : s % 16 == 5 ? j1 : (int)r.below(m);
    double acc = 0;
    for (int i = 0; i < n; i++)
      acc += (hdata[(size_t)i * m + j1] - rmean[j1]) * (hdata[(size_t)i * m + j2] - rmean[j2]);
    want[s] = (float)(acc / (n - 1));
    got[s] = hcov[(size_t)j1 * m + j2];
  }
  // Diagonal entries are about 1/12, off-diagonal ones about 1/(12 sqrt(n)) = 1.5e-3.
  ok = perf::close(got.data(), want.data(), samples, 1e-3f, 1e-6f, "cov") && ok;

  CK(cudaFree(data));
  CK(cudaFree(mean));
  CK(cudaFree(cdata));
  CK(cudaFree(cov));
  return run.finish(ok, perf::checksum(hcov));
}
