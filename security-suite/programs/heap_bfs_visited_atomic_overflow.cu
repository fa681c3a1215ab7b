// Level-synchronous BFS over a CSR grid graph with a visited bitmap updated by
// atomicOr. The bitmap was sized n / 32 words (rounded down instead of up), so the
// last n % 32 vertices set their bit one word past its end.
// Bug: heap-buffer-overflow, atomic WRITE.
#include "../../examples/common.h"
#include <vector>

__global__ void bfs_level(const int *rowptr, const int *col, const int *frontier, int fsize,
                          unsigned *visited, int *level, int depth, int *next, int *nsize) {
  int t = blockIdx.x * blockDim.x + threadIdx.x;
  if (t >= fsize) return;
  int u = frontier[t];
  for (int j = rowptr[u]; j < rowptr[u + 1]; ++j) {
    int v = col[j];
    unsigned bit = 1u << (v % 32);
    unsigned old = atomicOr(&visited[v / 32], bit); // cusafe-expect: heap-buffer-overflow
    if (!(old & bit)) {
      level[v] = depth + 1;
      next[atomicAdd(nsize, 1)] = v;
    }
  }
}

int main() {
  const int gw = 40, gh = 25, n = gw * gh; // 1000 vertices: 1000 % 32 = 8
  std::vector<int> rowptr(n + 1), col;
  for (int v = 0; v < n; ++v) {
    rowptr[v] = (int)col.size();
    int x = v % gw, y = v / gw;
    if (x > 0) col.push_back(v - 1);
    if (x < gw - 1) col.push_back(v + 1);
    if (y > 0) col.push_back(v - gw);
    if (y < gh - 1) col.push_back(v + gw);
  }
  rowptr[n] = (int)col.size();
  const int words = n / 32; // should be (n + 31) / 32
  int *drow, *dcol, *level, *fa, *fb, *nsize;
  unsigned *visited;
  CK(cudaMalloc(&drow, (n + 1) * sizeof(int)));
  CK(cudaMalloc(&dcol, col.size() * sizeof(int)));
  CK(cudaMalloc(&level, n * sizeof(int)));
  CK(cudaMalloc(&fa, n * sizeof(int)));
  CK(cudaMalloc(&fb, n * sizeof(int)));
  CK(cudaMalloc(&nsize, sizeof(int)));
  CK(cudaMalloc(&visited, words * sizeof(unsigned)));
  CK(cudaMemcpy(drow, rowptr.data(), (n + 1) * sizeof(int), cudaMemcpyHostToDevice));
  CK(cudaMemcpy(dcol, col.data(), col.size() * sizeof(int), cudaMemcpyHostToDevice));
  CK(cudaMemset(level, 0, n * sizeof(int)));
  CK(cudaMemset(visited, 0, words * sizeof(unsigned)));
  const unsigned one = 1; // vertex 0 is the source
  CK(cudaMemcpy(visited, &one, sizeof one, cudaMemcpyHostToDevice));
  CK(cudaMemset(fa, 0, sizeof(int)));
  int fsize = 1, depth = 0;
  while (fsize > 0) {
    CK(cudaMemset(nsize, 0, sizeof(int)));
    bfs_level<<<(fsize + 127) / 128, 128>>>(drow, dcol, fa, fsize, visited, level, depth, fb, nsize);
    CK(cudaMemcpy(&fsize, nsize, sizeof(int), cudaMemcpyDeviceToHost));
    std::swap(fa, fb);
    ++depth;
  }
  std::vector<int> lv(n);
  CK(cudaMemcpy(lv.data(), level, n * sizeof(int), cudaMemcpyDeviceToHost));
  int maxl = 0;
  for (int l : lv) maxl = l > maxl ? l : maxl;
  std::printf("bfs: %d rounds, max level %d, far corner %d\n", depth, maxl, lv[n - 1]);
  CK(cudaFree(drow));
  CK(cudaFree(dcol));
  CK(cudaFree(level));
  CK(cudaFree(fa));
  CK(cudaFree(fb));
  CK(cudaFree(nsize));
  CK(cudaFree(visited));
  return 0;
}
