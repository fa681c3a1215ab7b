// ~1.1 ms per pass on H100 (measured, plain build): 3x3x3 convolution of a 640 x 512 x 512 fp32 volume (671 MB in, 671 MB out), weights in constant memory.
#include "../harness.h"

__constant__ float c_w[27];

// B[i][j][k] = sum over the 3x3x3 neighbourhood of A[i][j][k] weighted by c_w, for interior
// points; one thread per point, one grid layer (blockIdx.z) per plane i. The border of B is not written.
__global__ void conv3d_kernel(int ni, int nj, int nk, const float *A, float *B) {
  int k = blockIdx.x * blockDim.x + threadIdx.x;
  int j = blockIdx.y * blockDim.y + threadIdx.y;
  int i = blockIdx.z;
  if (i > 0 && i < ni - 1 && j > 0 && j < nj - 1 && k > 0 && k < nk - 1) {
    float acc = 0.0f;
#pragma unroll
    for (int di = -1; di <= 1; di++)
#pragma unroll
      for (int dj = -1; dj <= 1; dj++)
#pragma unroll
        for (int dk = -1; dk <= 1; dk++)
          acc += c_w[(di + 1) * 9 + (dj + 1) * 3 + (dk + 1)] *
                 A[((i + di) * nj + (j + dj)) * nk + (k + dk)];
    B[(i * nj + j) * nk + k] = acc;
  }
}

int main(int argc, char **argv) {
  perf::Run run(argc, argv, "conv3d", 20);
  const int ni = 640, nj = 512, nk = 512;
  const size_t total = (size_t)ni * nj * nk;

  std::vector<float> hA(total), hw(27);
  perf::fill(hA, 131);
  perf::fill(hw, 132, -0.2f, 0.2f);

  float *A, *B;
  CK(cudaMalloc(&A, total * sizeof(float)));
  CK(cudaMalloc(&B, total * sizeof(float)));
  CK(cudaMemcpy(A, hA.data(), total * sizeof(float), cudaMemcpyHostToDevice));
  CK(cudaMemset(B, 0, total * sizeof(float))); // the border stays zero
  CK(cudaMemcpyToSymbol(c_w, hw.data(), 27 * sizeof(float)));

  dim3 block(32, 8, 1);
  dim3 grid(perf::cdiv(nk, block.x), perf::cdiv(nj, block.y), ni);
  auto pass = [&] { conv3d_kernel<<<grid, block>>>(ni, nj, nk, A, B); };
  run.warmup(pass);
  run.time(pass);

  std::vector<float> hB(total);
  CK(cudaMemcpy(hB.data(), B, total * sizeof(float), cudaMemcpyDeviceToHost));

  // Reference in double: 64 whole lines along k, at (i, j) on the faces, edges and at random.
  perf::Rng r(133);
  std::vector<float> got, want;
  const int fixed[6][2] = {{0, 0}, {1, 1}, {ni - 2, nj - 2}, {ni - 1, 5}, {7, nj - 1}, {1, nj - 2}};
  for (int s = 0; s < 64; s++) {
    int i = s < 6 ? fixed[s][0] : (int)r.below(ni);
    int j = s < 6 ? fixed[s][1] : (int)r.below(nj);
    for (int k = 0; k < nk; k++) {
      double v = 0;
      if (i > 0 && i < ni - 1 && j > 0 && j < nj - 1 && k > 0 && k < nk - 1)
        for (int di = -1; di <= 1; di++)
          for (int dj = -1; dj <= 1; dj++)
            for (int dk = -1; dk <= 1; dk++)
              v += (double)hw[(di + 1) * 9 + (dj + 1) * 3 + (dk + 1)] *
                   hA[((size_t)(i + di) * nj + (j + dj)) * nk + (k + dk)];
      got.push_back(hB[((size_t)i * nj + j) * nk + k]);
      want.push_back((float)v);
    }
  }
  bool ok = perf::close(got.data(), want.data(), got.size(), 1e-4f, 1e-5f, "B");

  CK(cudaFree(A));
  CK(cudaFree(B));
  return run.finish(ok, perf::checksum(hB));
}
