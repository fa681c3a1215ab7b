// A CSR graph descriptor (a struct of device pointers) lives in device memory. The
// host adds edges, which regrows the column and weight arrays (allocate bigger,
// copy, free the old ones), and updates its own copy of the descriptor but not the
// device one: the kernel follows stale pointers read from the device struct.
// Bug: use-after-free, READ (through a struct of pointers in device memory).
#include "../../examples/common.h"
#include <vector>

struct Csr {
  int n, nnz;
  int *rowptr, *col;
  float *w;
};

__global__ void weighted_degree(const Csr *g, float *deg) {
  int v = blockIdx.x * blockDim.x + threadIdx.x;
  if (v >= g->n) return;
  float acc = 0;
  for (int j = g->rowptr[v]; j < g->rowptr[v + 1]; ++j) acc += g->w[j] * (g->col[j] != v); // cusafe-expect: use-after-free
  deg[v] = acc;
}

template <class T> static void regrow(T *&p, int old_n, int new_n) {
  T *q;
  CK(cudaMalloc(&q, new_n * sizeof(T)));
  CK(cudaMemcpy(q, p, old_n * sizeof(T), cudaMemcpyDeviceToDevice));
  CK(cudaFree(p));
  p = q;
}

int main() {
  const int n = 256;
  std::vector<int> rowptr(n + 1), col;
  for (int v = 0; v < n; ++v) { // a ring: v -> v + 1
    rowptr[v] = v;
    col.push_back((v + 1) % n);
  }
  rowptr[n] = n;
  Csr g{n, n, nullptr, nullptr, nullptr};
  CK(cudaMalloc(&g.rowptr, (n + 1) * sizeof(int)));
  CK(cudaMalloc(&g.col, n * sizeof(int)));
  CK(cudaMalloc(&g.w, n * sizeof(float)));
  CK(cudaMemcpy(g.rowptr, rowptr.data(), (n + 1) * sizeof(int), cudaMemcpyHostToDevice));
  CK(cudaMemcpy(g.col, col.data(), n * sizeof(int), cudaMemcpyHostToDevice));
  std::vector<float> w(2 * n, 1.0f);
  CK(cudaMemcpy(g.w, w.data(), n * sizeof(float), cudaMemcpyHostToDevice));
  Csr *dg;
  CK(cudaMalloc(&dg, sizeof(Csr)));
  CK(cudaMemcpy(dg, &g, sizeof(Csr), cudaMemcpyHostToDevice));

  // Add the reverse edges at the end of the edge arrays (the graph is not re-sorted;
  // the kernel only reads the first n edges' rows). The device descriptor is stale.
  regrow(g.col, n, 2 * n);
  regrow(g.w, n, 2 * n);
  for (int v = 0; v < n; ++v) col.push_back((v + n - 1) % n);
  CK(cudaMemcpy(g.col, col.data(), 2 * n * sizeof(int), cudaMemcpyHostToDevice));
  CK(cudaMemcpy(g.w, w.data(), 2 * n * sizeof(float), cudaMemcpyHostToDevice));
  g.nnz = 2 * n;

  float *deg;
  CK(cudaMalloc(&deg, n * sizeof(float)));
  weighted_degree<<<n / 128, 128>>>(dg, deg);
  CK(cudaDeviceSynchronize());
  std::vector<float> hd(n);
  CK(cudaMemcpy(hd.data(), deg, n * sizeof(float), cudaMemcpyDeviceToHost));
  std::printf("graph with %d edges; deg[0]=%.0f\n", g.nnz, hd[0]);
  CK(cudaFree(g.rowptr));
  CK(cudaFree(g.col));
  CK(cudaFree(g.w));
  CK(cudaFree(dg));
  CK(cudaFree(deg));
  return 0;
}
