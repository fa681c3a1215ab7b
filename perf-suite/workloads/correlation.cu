// ~7 ms per pass on H100 (measured, plain build): correlation of 3072 variables over 3072 samples, fp32 (mean, stddev, normalise, 14.5 G multiply-adds).
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

// stddev[j] = sqrt(sum_i (data[i][j] - mean[j])^2 / n), with near-zero deviations taken as 1.
__global__ void std_kernel(int n, int m, float float_n, float eps, const float *data,
                           const float *mean, float *stddev) {
  int j = blockIdx.x * blockDim.x + threadIdx.x;
  if (j < m) {
    float mu = mean[j];
    float acc = 0.0f;
    for (int i = 0; i < n; i++) {
      float d = data[i * m + j] - mu;
      acc += d * d;
    }
    float sd = sqrtf(acc / float_n);
    stddev[j] = sd <= eps ? 1.0f : sd;
  }
}

// ndata = (data - mean) / (sqrt(n) * stddev), into its own buffer (PolyBench works in place).
__global__ void reduce_kernel(int n, int m, float float_n, const float *data, const float *mean,
                              const float *stddev, float *ndata) {
  int j = blockIdx.x * blockDim.x + threadIdx.x;
  int i = blockIdx.y * blockDim.y + threadIdx.y;
  if (i < n && j < m) ndata[i * m + j] = (data[i * m + j] - mean[j]) / (sqrtf(float_n) * stddev[j]);
}

// corr[j1][j2] = corr[j2][j1] = sum_i ndata[i][j1] * ndata[i][j2] for j2 > j1; 1 on the diagonal.
__global__ void corr_kernel(int n, int m, const float *ndata, float *corr) {
  int j2 = blockIdx.x * blockDim.x + threadIdx.x;
  int j1 = blockIdx.y * blockDim.y + threadIdx.y;
  if (j1 < m && j2 < m && j2 >= j1) {
    if (j2 == j1) {
      corr[j1 * m + j1] = 1.0f;
    } else {
      float acc = 0.0f;
      for (int i = 0; i < n; i++) acc += ndata[i * m + j1] * ndata[i * m + j2];
      corr[j1 * m + j2] = acc;
      corr[j2 * m + j1] = acc;
    }
  }
}

int main(int argc, char **argv) {
  perf::Run run(argc, argv, "correlation", 10);
  const int n = 3072, m = 3072; // samples, variables
  const float float_n = (float)n, eps = 0.1f;

  std::vector<float> hdata((size_t)n * m);
  perf::fill(hdata, 111, 0.0f, 1.0f);

  float *data, *mean, *stddev, *ndata, *corr;
  CK(cudaMalloc(&data, hdata.size() * sizeof(float)));
  CK(cudaMalloc(&mean, m * sizeof(float)));
  CK(cudaMalloc(&stddev, m * sizeof(float)));
  CK(cudaMalloc(&ndata, hdata.size() * sizeof(float)));
  CK(cudaMalloc(&corr, (size_t)m * m * sizeof(float)));
  CK(cudaMemcpy(data, hdata.data(), hdata.size() * sizeof(float), cudaMemcpyHostToDevice));

  const int bs = 256;
  dim3 block(32, 8);
  dim3 grid_r(perf::cdiv(m, block.x), perf::cdiv(n, block.y));
  dim3 grid_c(perf::cdiv(m, block.x), perf::cdiv(m, block.y));
  auto pass = [&] {
    mean_kernel<<<perf::cdiv(m, bs), bs>>>(n, m, float_n, data, mean);
    std_kernel<<<perf::cdiv(m, bs), bs>>>(n, m, float_n, eps, data, mean, stddev);
    reduce_kernel<<<grid_r, block>>>(n, m, float_n, data, mean, stddev, ndata);
    corr_kernel<<<grid_c, block>>>(n, m, ndata, corr);
  };
  run.warmup(pass);
  run.time(pass);

  std::vector<float> hmean(m), hstd(m), hcorr((size_t)m * m);
  CK(cudaMemcpy(hmean.data(), mean, m * sizeof(float), cudaMemcpyDeviceToHost));
  CK(cudaMemcpy(hstd.data(), stddev, m * sizeof(float), cudaMemcpyDeviceToHost));
  CK(cudaMemcpy(hcorr.data(), corr, hcorr.size() * sizeof(float), cudaMemcpyDeviceToHost));

  // Reference in double: all means and deviations, then 512 correlation entries
  // (corners, diagonal ones, random ones on either side of the diagonal).
  std::vector<double> rmean(m, 0.0), rstd(m, 0.0);
  for (int i = 0; i < n; i++)
    for (int j = 0; j < m; j++) rmean[j] += hdata[(size_t)i * m + j];
  for (int j = 0; j < m; j++) rmean[j] /= n;
  for (int i = 0; i < n; i++)
    for (int j = 0; j < m; j++) {
      double d = hdata[(size_t)i * m + j] - rmean[j];
      rstd[j] += d * d;
    }
  for (int j = 0; j < m; j++) {
    rstd[j] = std::sqrt(rstd[j] / n);
    if (rstd[j] <= eps) rstd[j] = 1.0;
  }
  std::vector<float> want_mean(rmean.begin(), rmean.end()), want_std(rstd.begin(), rstd.end());
  bool ok = perf::close(hmean.data(), want_mean.data(), m, 1e-4f, 1e-6f, "mean");
  ok = perf::close(hstd.data(), want_std.data(), m, 1e-4f, 1e-6f, "stddev") && ok;

  const int samples = 512;
  int c1[4] = {0, 0, m - 1, m - 1}, c2[4] = {0, m - 1, 0, m - 1};
  perf::Rng r(112);
  std::vector<float> got(samples), want(samples);
  for (int s = 0; s < samples; s++) {
    int j1 = s < 4 ? c1[s] : (int)r.below(m);
    int j2 = s < 4 ? c2[s] : s % 16 == 5 ? j1 : (int)r.below(m);
    double v = 1.0;
    if (j1 != j2) {
      double acc = 0;
      for (int i = 0; i < n; i++)
        acc += (hdata[(size_t)i * m + j1] - rmean[j1]) * (hdata[(size_t)i * m + j2] - rmean[j2]);
      v = acc / (n * rstd[j1] * rstd[j2]);
    }
    want[s] = (float)v;
    got[s] = hcorr[(size_t)j1 * m + j2];
  }
  // Off-diagonal entries are about 1/sqrt(n) = 0.018 in size.
  ok = perf::close(got.data(), want.data(), samples, 1e-4f, 1e-6f, "corr") && ok;

  CK(cudaFree(data));
  CK(cudaFree(mean));
  CK(cudaFree(stddev));
  CK(cudaFree(ndata));
  CK(cudaFree(corr));
  return run.finish(ok, perf::checksum(hcorr));
}
