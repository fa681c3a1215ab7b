// ~6 ms per pass on H100 (measured, plain build): D = (alpha*A*B)*C + beta*D0, two naive 2048-class fp32 matrix products (39 GFLOP).
#include "../harness.h"
#include <algorithm>

// tmp = alpha * A * B; A is ni x nk, B is nk x nj. One thread per output element.
__global__ void mm2_kernel1(int ni, int nj, int nk, float alpha, const float *A, const float *B,
                            float *tmp) {
  int j = blockIdx.x * blockDim.x + threadIdx.x;
  int i = blockIdx.y * blockDim.y + threadIdx.y;
  if (i < ni && j < nj) {
    float acc = 0.0f;
    for (int k = 0; k < nk; k++) acc += A[i * nk + k] * B[k * nj + j];
    tmp[i * nj + j] = alpha * acc;
  }
}

// D = tmp * C + beta * D0; tmp is ni x nj, C is nj x nl.
__global__ void mm2_kernel2(int ni, int nl, int nj, float beta, const float *tmp, const float *C,
                            const float *D0, float *D) {
  int l = blockIdx.x * blockDim.x + threadIdx.x;
  int i = blockIdx.y * blockDim.y + threadIdx.y;
  if (i < ni && l < nl) {
    float acc = 0.0f;
    for (int j = 0; j < nj; j++) acc += tmp[i * nj + j] * C[j * nl + l];
    D[i * nl + l] = acc + beta * D0[i * nl + l];
  }
}

int main(int argc, char **argv) {
  perf::Run run(argc, argv, "2mm", 10);
  const int ni = 2048, nj = 2304, nk = 1920, nl = 2176;
  const float alpha = 1.5f, beta = 1.2f;

  std::vector<float> hA((size_t)ni * nk), hB((size_t)nk * nj), hC((size_t)nj * nl),
      hD0((size_t)ni * nl);
  perf::fill(hA, 11);
  perf::fill(hB, 12);
  perf::fill(hC, 13);
  perf::fill(hD0, 14);

  float *A, *B, *C, *D0, *tmp, *D;
  CK(cudaMalloc(&A, hA.size() * sizeof(float)));
  CK(cudaMalloc(&B, hB.size() * sizeof(float)));
  CK(cudaMalloc(&C, hC.size() * sizeof(float)));
  CK(cudaMalloc(&D0, hD0.size() * sizeof(float)));
  CK(cudaMalloc(&tmp, (size_t)ni * nj * sizeof(float)));
  CK(cudaMalloc(&D, hD0.size() * sizeof(float)));
  CK(cudaMemcpy(A, hA.data(), hA.size() * sizeof(float), cudaMemcpyHostToDevice));
  CK(cudaMemcpy(B, hB.data(), hB.size() * sizeof(float), cudaMemcpyHostToDevice));
  CK(cudaMemcpy(C, hC.data(), hC.size() * sizeof(float), cudaMemcpyHostToDevice));
  CK(cudaMemcpy(D0, hD0.data(), hD0.size() * sizeof(float), cudaMemcpyHostToDevice));

  dim3 block(32, 8);
  dim3 grid1(perf::cdiv(nj, block.x), perf::cdiv(ni, block.y));
  dim3 grid2(perf::cdiv(nl, block.x), perf::cdiv(ni, block.y));
  auto pass = [&] {
    mm2_kernel1<<<grid1, block>>>(ni, nj, nk, alpha, A, B, tmp);
    mm2_kernel2<<<grid2, block>>>(ni, nl, nj, beta, tmp, C, D0, D);
  };
  run.warmup(pass);
  run.time(pass);

  std::vector<float> htmp((size_t)ni * nj), hD(hD0.size());
  CK(cudaMemcpy(htmp.data(), tmp, htmp.size() * sizeof(float), cudaMemcpyDeviceToHost));
  CK(cudaMemcpy(hD.data(), D, hD.size() * sizeof(float), cudaMemcpyDeviceToHost));

  // Reference: 16 whole rows of tmp and D (first, last and 14 random rows), in double.
  const int rows = 16;
  perf::Rng r(21);
  std::vector<float> got_t, want_t, got_d, want_d;
  std::vector<double> trow(nj), drow(nl);
  for (int s = 0; s < rows; s++) {
    int i = s == 0 ? 0 : s == 1 ? ni - 1 : (int)r.below(ni);
    std::fill(trow.begin(), trow.end(), 0.0);
    for (int k = 0; k < nk; k++) {
      double a = hA[(size_t)i * nk + k];
      const float *b = &hB[(size_t)k * nj];
      for (int j = 0; j < nj; j++) trow[j] += a * b[j];
    }
    for (int j = 0; j < nj; j++) trow[j] *= alpha;
    for (int l = 0; l < nl; l++) drow[l] = beta * (double)hD0[(size_t)i * nl + l];
    for (int j = 0; j < nj; j++) {
      double t = trow[j];
      const float *c = &hC[(size_t)j * nl];
      for (int l = 0; l < nl; l++) drow[l] += t * c[l];
    }
    for (int j = 0; j < nj; j++) {
      got_t.push_back(htmp[(size_t)i * nj + j]);
      want_t.push_back((float)trow[j]);
    }
    for (int l = 0; l < nl; l++) {
      got_d.push_back(hD[(size_t)i * nl + l]);
      want_d.push_back((float)drow[l]);
    }
  }
  // tmp entries are about 1.5 * sqrt(nk / 9) = 22 in size, D entries about 22 * sqrt(nj / 3) = 600.
  bool ok = perf::close(got_t.data(), want_t.data(), got_t.size(), 1e-3f, 1e-2f, "tmp");
  ok = perf::close(got_d.data(), want_d.data(), got_d.size(), 1e-3f, 0.2f, "D") && ok;

  CK(cudaFree(A));
  CK(cudaFree(B));
  CK(cudaFree(C));
  CK(cudaFree(D0));
  CK(cudaFree(tmp));
  CK(cudaFree(D));
  return run.finish(ok, perf::checksum(hD));
}
