// Correct: a two-level search tree walked like a B+-tree, one block per key and one
// thread per slot: each node holds F edges and a sentinel (all allocated), and at every
// level thread t takes the child when e[t] <= key < e[t + 1]. The read of e[t + 1] runs
// only where e[t] <= key held, inside the level loop, and cusafe checks it on the offset
// of that dominating read's check. The keys reach both ends: below the first leaf edge,
// on it, on the last leaf's last edge and above it, where the last thread reads the
// buffer's last element (the last leaf's sentinel). None of it may be reported.
#include "../../examples/common.h"
#include <climits>
#include <vector>

constexpr int F = 32;         // edges per node, threads per block
constexpr int NODE = F + 1;   // ints per node: F edges and a sentinel
constexpr int NODES = 1 + F;  // the root and its F leaves

__global__ void descend(const int *edges, int levels, const int *keys, int *slot_of) {
  __shared__ int node;
  int t = threadIdx.x, q = blockIdx.x;
  int key = keys[q];
  if (t == 0) node = 0;
  __syncthreads();
  int found = -1;
  for (int level = 0; level < levels; ++level) {
    const int *e = edges + node * NODE;
    int next = -1;
    if (e[t] <= key && e[t + 1] > key) next = t;
    __syncthreads(); // every thread has read node
    if (next >= 0) {
      found = (node - 1) * F + next;
      node = 1 + next;
    }
    __syncthreads();
  }
  if (found >= 0) slot_of[q] = found;
}

int main() {
  std::vector<int> edges(NODES * NODE);
  for (int c = 0; c < F; ++c) edges[c] = c == 0 ? INT_MIN : 10 * F * c; // the root
  edges[F] = INT_MAX;
  for (int c = 0; c < F; ++c) {
    int *leaf = &edges[(1 + c) * NODE];
    for (int t = 0; t < F; ++t) leaf[t] = 10 * (F * c + t);
    leaf[F] = INT_MAX;
  }
  const int last = 10 * (F * F - 1);
  std::vector<int> keys = {-5, 0, 7, 1234, 10 * F - 1, 10 * F, last - 1, last, last + 99};
  const int nkeys = (int)keys.size();
  int *d_edges, *d_keys, *d_out;
  CK(cudaMalloc(&d_edges, edges.size() * sizeof(int)));
  CK(cudaMalloc(&d_keys, nkeys * sizeof(int)));
  CK(cudaMalloc(&d_out, nkeys * sizeof(int)));
  CK(cudaMemcpy(d_edges, edges.data(), edges.size() * sizeof(int), cudaMemcpyHostToDevice));
  CK(cudaMemcpy(d_keys, keys.data(), nkeys * sizeof(int), cudaMemcpyHostToDevice));
  CK(cudaMemset(d_out, 0xff, nkeys * sizeof(int)));
  descend<<<nkeys, F>>>(d_edges, 2, d_keys, d_out);
  CK(cudaDeviceSynchronize());
  std::vector<int> out(nkeys);
  CK(cudaMemcpy(out.data(), d_out, nkeys * sizeof(int), cudaMemcpyDeviceToHost));
  int bad = 0;
  for (int q = 0; q < nkeys; ++q) {
    int want = -1; // the slot of the last leaf edge <= key (none below the first)
    for (int s = 0; s < F * F; ++s)
      if (10 * s <= keys[q]) want = s;
    if (out[q] != want) {
      std::printf("key %d: slot %d, expected %d\n", keys[q], out[q], want);
      ++bad;
    }
  }
  std::printf("descend: %d keys, %d wrong\n", nkeys, bad);
  CK(cudaFree(d_edges));
  CK(cudaFree(d_keys));
  CK(cudaFree(d_out));
  return bad ? 1 : 0;
}
