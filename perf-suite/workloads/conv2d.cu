// ~0.86 ms per pass on H100 (measured, plain build; 20 passes = 17 ms, device memory caps the size): 3x3 convolution of a 12288 x 16384 fp32 image (805 MB in, 805 MB out).
#include "../harness.h"

// B[i][j] = sum of the 3x3 neighbourhood of A[i][j] with fixed weights, for interior points.
// The border of B is not written.
__global__ void conv2d_kernel(int ni, int nj, const float *A, float *B) {
  int j = blockIdx.x * blockDim.x + threadIdx.x;
  int i = blockIdx.y * blockDim.y + threadIdx.y;
  const float c11 = 0.05f, c12 = -0.20f, c13 = 0.15f;
  const float c21 = 0.30f, c22 = 0.45f, c23 = -0.10f;
  const float c31 = -0.25f, c32 = 0.35f, c33 = 0.10f;
  if (i > 0 && i < ni - 1 && j > 0 && j < nj - 1) {
    B[i * nj + j] = c11 * A[(i - 1) * nj + (j - 1)] + c12 * A[(i - 1) * nj + j] +
                    c13 * A[(i - 1) * nj + (j + 1)] + c21 * A[i * nj + (j - 1)] +
                    c22 * A[i * nj + j] + c23 * A[i * nj + (j + 1)] +
                    c31 * A[(i + 1) * nj + (j - 1)] + c32 * A[(i + 1) * nj + j] +
                    c33 * A[(i + 1) * nj + (j + 1)];
  }
}

int main(int argc, char **argv) {
  perf::Run run(argc, argv, "conv2d", 20);
  const int ni = 12288, nj = 16384;

  std::vector<float> hA((size_t)ni * nj);
  perf::fill(hA, 121);

  float *A, *B;
  CK(cudaMalloc(&A, hA.size() * sizeof(float)));
  CK(cudaMalloc(&B, hA.size() * sizeof(float)));
  CK(cudaMemcpy(A, hA.data(), hA.size() * sizeof(float), cudaMemcpyHostToDevice));
  CK(cudaMemset(B, 0, hA.size() * sizeof(float))); // the border stays zero

  dim3 block(32, 8);
  dim3 grid(perf::cdiv(nj, block.x), perf::cdiv(ni, block.y));
  auto pass = [&] { conv2d_kernel<<<grid, block>>>(ni, nj, A, B); };
  run.warmup(pass);
  run.time(pass);

  std::vector<float> hB(hA.size());
  CK(cudaMemcpy(hB.data(), B, hB.size() * sizeof(float), cudaMemcpyDeviceToHost));

  // Reference in double: 64 whole rows (the first two, the last two and 60 random ones).
  const double w[3][3] = {{0.05, -0.20, 0.15}, {0.30, 0.45, -0.10}, {-0.25, 0.35, 0.10}};
  perf::Rng r(122);
  std::vector<float> got, want;
  for (int s = 0; s < 64; s++) {
    int i = s == 0 ? 0 : s == 1 ? 1 : s == 2 ? ni - 2 : s == 3 ? ni - 1 : (int)r.below(ni);
    for (int j = 0; j < nj; j++) {
      double v = 0;
      if (i > 0 && i < ni - 1 && j > 0 && j < nj - 1)
        for (int di = -1; di <= 1; di++)
          for (int dj = -1; dj <= 1; dj++)
            v += w[di + 1][dj + 1] * hA[(size_t)(i + di) * nj + (j + dj)];
      got.push_back(hB[(size_t)i * nj + j]);
      want.push_back((float)v);
    }
  }
  bool ok = perf::close(got.data(), want.data(), got.size(), 1e-4f, 1e-5f, "B");

  CK(cudaFree(A));
  CK(cudaFree(B));
  return run.finish(ok, perf::checksum(hB));
}
