// A two-level search tree walked like a B+-tree, one block per key and one thread per
// slot: each node holds F edges and a sentinel, and at every level thread t takes the
// child when e[t] <= key < e[t + 1]. The edges were allocated one int short (the last
// leaf's sentinel is missing), so for a key at or above the last leaf's last edge the
// last thread reads e[F] of the last leaf, one element past the end. The read of
// e[t + 1] runs only where e[t] <= key held, inside the level loop, where cusafe checks
// it on the offset of that dominating read's check. Bug: heap-buffer-overflow, READ
// (linear, 4 bytes past the end of a 4 KiB buffer).
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
    if (e[t] <= key &&
        e[t + 1] > key) // cusafe-expect: heap-buffer-overflow
      next = t;
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
  const int nkeys = 64;
  std::vector<int> edges(NODES * NODE);
  for (int c = 0; c < F; ++c) edges[c] = c == 0 ? INT_MIN : 10 * F * c; // the root
  edges[F] = INT_MAX;
  for (int c = 0; c < F; ++c) {
    int *leaf = &edges[(1 + c) * NODE];
    for (int t = 0; t < F; ++t) leaf[t] = 10 * (F * c + t);
    leaf[F] = INT_MAX;
  }
  std::vector<int> keys(nkeys);
  for (int q = 0; q < nkeys; ++q) keys[q] = 163 * q; // the last keys lie above the last edge
  const size_t bytes = (edges.size() - 1) * sizeof(int); // the last sentinel left out
  int *d_edges, *d_keys, *d_out;
  CK(cudaMalloc(&d_edges, bytes));
  CK(cudaMalloc(&d_keys, nkeys * sizeof(int)));
  CK(cudaMalloc(&d_out, nkeys * sizeof(int)));
  CK(cudaMemcpy(d_edges, edges.data(), bytes, cudaMemcpyHostToDevice));
  CK(cudaMemcpy(d_keys, keys.data(), nkeys * sizeof(int), cudaMemcpyHostToDevice));
  CK(cudaMemset(d_out, 0xff, nkeys * sizeof(int)));
  descend<<<nkeys, F>>>(d_edges, 2, d_keys, d_out);
  CK(cudaDeviceSynchronize());
  std::vector<int> out(nkeys);
  CK(cudaMemcpy(out.data(), d_out, nkeys * sizeof(int), cudaMemcpyDeviceToHost));
  long sum = 0;
  for (int v : out) sum += v;
  std::printf("descend checksum %ld\n", sum);
  CK(cudaFree(d_edges));
  CK(cudaFree(d_keys));
  CK(cudaFree(d_out));
  return 0;
}
