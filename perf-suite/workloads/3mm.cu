// ~7 ms per pass on H100 (measured, plain build): G = (A*B)*(C*D), three 2048-class fp32 products (55 GFLOP), 16x16 shared-memory tiles.
#include "../harness.h"

#define TILE 16

// Out = X * Y; X is n x p, Y is p x m, Out is n x m, row-major.
__global__ void matmul_tiled(int n, int m, int p, const float *X, const float *Y, float *Out) {
  __shared__ float Xs[TILE][TILE];
  __shared__ float Ys[TILE][TILE];
  int tx = threadIdx.x, ty = threadIdx.y;
  int row = blockIdx.y * TILE + ty;
  int col = blockIdx.x * TILE + tx;
  float acc = 0.0f;
  int tiles = (p + TILE - 1) / TILE;
  for (int t = 0; t < tiles; t++) {
    int kx = t * TILE + tx, ky = t * TILE + ty;
    Xs[ty][tx] = (row < n && kx < p) ? X[row * p + kx] : 0.0f;
    Ys[ty][tx] = (ky < p && col < m) ? Y[ky * m + col] : 0.0f;
    __syncthreads();
    for (int k = 0; k < TILE; k++) acc += Xs[ty][k] * Ys[k][tx];
    __syncthreads();
  }
  if (row < n && col < m) Out[row * m + col] = acc;
}

int main(int argc, char **argv) {
  perf::Run run(argc, argv, "3mm", 10);
  // E = A*B (ni x nj), F = C*D (nj x nl), G = E*F (ni x nl).
  const int ni = 2048, nj = 2176, nk = 1920, nl = 2112, nm = 2048;

  std::vector<float> hA((size_t)ni * nk), hB((size_t)nk * nj), hC((size_t)nj * nm),
      hD((size_t)nm * nl);
  perf::fill(hA, 31);
  perf::fill(hB, 32);
  perf::fill(hC, 33);
  perf::fill(hD, 34);

  float *A, *B, *C, *D, *E, *F, *G;
  CK(cudaMalloc(&A, hA.size() * sizeof(float)));
  CK(cudaMalloc(&B, hB.size() * sizeof(float)));
  CK(cudaMalloc(&C, hC.size() * sizeof(float)));
  CK(cudaMalloc(&D, hD.size() * sizeof(float)));
  CK(cudaMalloc(&E, (size_t)ni * nj * sizeof(float)));
  CK(cudaMalloc(&F, (size_t)nj * nl * sizeof(float)));
  CK(cudaMalloc(&G, (size_t)ni * nl * sizeof(float)));
  CK(cudaMemcpy(A, hA.data(), hA.size() * sizeof(float), cudaMemcpyHostToDevice));
  CK(cudaMemcpy(B, hB.data(), hB.size() * sizeof(float), cudaMemcpyHostToDevice));
  CK(cudaMemcpy(C, hC.data(), hC.size() * sizeof(float), cudaMemcpyHostToDevice));
  CK(cudaMemcpy(D, hD.data(), hD.size() * sizeof(float), cudaMemcpyHostToDevice));

  dim3 block(TILE, TILE);
  dim3 gridE(perf::cdiv(nj, TILE), perf::cdiv(ni, TILE));
  dim3 gridF(perf::cdiv(nl, TILE), perf::cdiv(nj, TILE));
  dim3 gridG(perf::cdiv(nl, TILE), perf::cdiv(ni, TILE));
  auto pass = [&] {
    matmul_tiled<<<gridE, block>>>(ni, nj, nk, A, B, E);
    matmul_tiled<<<gridF, block>>>(nj, nl, nm, C, D, F);
    matmul_tiled<<<gridG, block>>>(ni, nl, nj, E, F, G);
  };
  run.warmup(pass);
  run.time(pass);

  std::vector<float> hE((size_t)ni * nj), hF((size_t)nj * nl), hG((size_t)ni * nl);
  CK(cudaMemcpy(hE.data(), E, hE.size() * sizeof(float), cudaMemcpyDeviceToHost));
  CK(cudaMemcpy(hF.data(), F, hF.size() * sizeof(float), cudaMemcpyDeviceToHost));
  CK(cudaMemcpy(hG.data(), G, hG.size() * sizeof(float), cudaMemcpyDeviceToHost));

  // Reference in double: 16 rows of E, 32 columns of F and the 16 x 32 entries of G
  // where they cross. Row and column 0 and the last ones are always among them.
  const int nr = 16, nc = 32;
  perf::Rng r(35);
  std::vector<int> ri(nr), cl(nc);
  for (int s = 0; s < nr; s++) ri[s] = s == 0 ? 0 : s == 1 ? ni - 1 : (int)r.below(ni);
  for (int s = 0; s < nc; s++) cl[s] = s == 0 ? 0 : s == 1 ? nl - 1 : (int)r.below(nl);

  std::vector<double> Er((size_t)nr * nj, 0.0); // Er[s][j] = E[ri[s]][j]
  for (int s = 0; s < nr; s++)
    for (int k = 0; k < nk; k++) {
      double a = hA[(size_t)ri[s] * nk + k];
      const float *b = &hB[(size_t)k * nj];
      double *e = &Er[(size_t)s * nj];
      for (int j = 0; j < nj; j++) e[j] += a * b[j];
    }
  std::vector<double> Dsub((size_t)nm * nc); // Dsub[m][s] = D[m][cl[s]]
  for (int m = 0; m < nm; m++)
    for (int s = 0; s < nc; s++) Dsub[(size_t)m * nc + s] = hD[(size_t)m * nl + cl[s]];
  std::vector<double> Fc((size_t)nj * nc, 0.0); // Fc[j][s] = F[j][cl[s]]
  for (int j = 0; j < nj; j++)
    for (int m = 0; m < nm; m++) {
      double c = hC[(size_t)j * nm + m];
      const double *d = &Dsub[(size_t)m * nc];
      double *f = &Fc[(size_t)j * nc];
      for (int s = 0; s < nc; s++) f[s] += c * d[s];
    }

  std::vector<float> got_e, want_e, got_f, want_f, got_g, want_g;
  for (int s = 0; s < nr; s++)
    for (int j = 0; j < nj; j++) {
      got_e.push_back(hE[(size_t)ri[s] * nj + j]);
      want_e.push_back((float)Er[(size_t)s * nj + j]);
    }
  for (int j = 0; j < nj; j++)
    for (int s = 0; s < nc; s++) {
      got_f.push_back(hF[(size_t)j * nl + cl[s]]);
      want_f.push_back((float)Fc[(size_t)j * nc + s]);
    }
  for (int a = 0; a < nr; a++)
    for (int b = 0; b < nc; b++) {
      double acc = 0;
      for (int j = 0; j < nj; j++) acc += Er[(size_t)a * nj + j] * Fc[(size_t)j * nc + b];
      got_g.push_back(hG[(size_t)ri[a] * nl + cl[b]]);
      want_g.push_back((float)acc);
    }
  // E and F entries are about sqrt(2048 / 9) = 15 in size, G entries about 15 * 15 * sqrt(nj) = 10000.
  bool ok = perf::close(got_e.data(), want_e.data(), got_e.size(), 1e-3f, 5e-3f, "E");
  ok = perf::close(got_f.data(), want_f.data(), got_f.size(), 1e-3f, 5e-3f, "F") && ok;
  ok = perf::close(got_g.data(), want_g.data(), got_g.size(), 1e-3f, 5.0f, "G") && ok;

  CK(cudaFree(A));
  CK(cudaFree(B));
  CK(cudaFree(C));
  CK(cudaFree(D));
  CK(cudaFree(E));
  CK(cudaFree(F));
  CK(cudaFree(G));
  return run.finish(ok, perf::checksum(hG));
}
