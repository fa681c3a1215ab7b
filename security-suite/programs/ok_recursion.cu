// Correct: recursive device functions (real call frames on the thread's stack): a
// recursive segment-tree build and range query over an array in global memory, and a
// recursive depth computation of a tree, with local arrays in the recursive frames.
#include "../../examples/common.h"
#include <vector>

__device__ int build(int *tree, const int *a, int node, int lo, int hi) {
  if (lo == hi) return tree[node] = a[lo];
  int mid = (lo + hi) / 2;
  return tree[node] = build(tree, a, 2 * node, lo, mid) + build(tree, a, 2 * node + 1, mid + 1, hi);
}

__device__ int query(const int *tree, int node, int lo, int hi, int l, int r) {
  if (r < lo || hi < l) return 0;
  if (l <= lo && hi <= r) return tree[node];
  int mid = (lo + hi) / 2;
  int parts[2];
  parts[0] = query(tree, 2 * node, lo, mid, l, r);
  parts[1] = query(tree, 2 * node + 1, mid + 1, hi, l, r);
  return parts[0] + parts[1];
}

__device__ int depth(const int *left, const int *right, int v) {
  if (v < 0) return 0;
  int d[2] = {depth(left, right, left[v]), depth(left, right, right[v])};
  return 1 + (d[0] > d[1] ? d[0] : d[1]);
}

__global__ void seg_build(int *tree, const int *a, int n) {
  if (threadIdx.x == 0 && blockIdx.x == 0) build(tree, a, 1, 0, n - 1);
}

__global__ void seg_query(const int *tree, int n, int *out, int q, const int *left,
                          const int *right, int *d) {
  int t = blockIdx.x * blockDim.x + threadIdx.x;
  if (t < q) out[t] = query(tree, 1, 0, n - 1, t * 7 % n, min(n - 1, t * 7 % n + 100));
  if (t == 0) *d = depth(left, right, 0);
}

int main() {
  const int n = 1000, q = 128, nodes = 255;
  std::vector<int> a(n), left(nodes, -1), right(nodes, -1);
  for (int i = 0; i < n; ++i) a[i] = i % 10;
  for (int v = 0; v < nodes; ++v) { // a complete binary tree of depth 8
    if (2 * v + 1 < nodes) left[v] = 2 * v + 1;
    if (2 * v + 2 < nodes) right[v] = 2 * v + 2;
  }
  int *da, *tree, *out, *dl, *dr, *d;
  CK(cudaDeviceSetLimit(cudaLimitStackSize, 8192));
  CK(cudaMalloc(&da, n * sizeof(int)));
  CK(cudaMalloc(&tree, 4 * n * sizeof(int)));
  CK(cudaMalloc(&out, q * sizeof(int)));
  CK(cudaMalloc(&dl, nodes * sizeof(int)));
  CK(cudaMalloc(&dr, nodes * sizeof(int)));
  CK(cudaMalloc(&d, sizeof(int)));
  CK(cudaMemcpy(da, a.data(), n * sizeof(int), cudaMemcpyHostToDevice));
  CK(cudaMemcpy(dl, left.data(), nodes * sizeof(int), cudaMemcpyHostToDevice));
  CK(cudaMemcpy(dr, right.data(), nodes * sizeof(int), cudaMemcpyHostToDevice));
  seg_build<<<1, 32>>>(tree, da, n);
  seg_query<<<1, q>>>(tree, n, out, q, dl, dr, d);
  std::vector<int> h(q);
  int hd = 0;
  CK(cudaMemcpy(h.data(), out, q * sizeof(int), cudaMemcpyDeviceToHost));
  CK(cudaMemcpy(&hd, d, sizeof hd, cudaMemcpyDeviceToHost));
  long long s = 0;
  for (int v : h) s += v;
  std::printf("range sums total %lld, q[5]=%d, tree depth %d\n", s, h[5], hd);
  CK(cudaFree(da));
  CK(cudaFree(tree));
  CK(cudaFree(out));
  CK(cudaFree(dl));
  CK(cudaFree(dr));
  CK(cudaFree(d));
  return 0;
}
