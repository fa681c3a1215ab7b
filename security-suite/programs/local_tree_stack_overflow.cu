// Range counting over a binary search tree with an explicit per-thread traversal
// stack of 16 entries ("enough for a balanced tree of 65536 keys"). The keys were
// inserted in sorted order with a small jitter, giving a comb-shaped tree 20 levels
// deep: every level leaves one pending subtree on the stack, and the push writes
// past the stack array. Bug: stack-buffer-overflow, WRITE (local array, variable index).
#include "../../examples/common.h"
#include <vector>

constexpr int STACK = 16;

__global__ void count_range(const int *key, const int *left, const int *right, int root,
                            const int2 *ranges, int *count, int q) {
  int t = blockIdx.x * blockDim.x + threadIdx.x;
  if (t >= q) return;
  int stack[STACK];
  int sp = 0, found = 0;
  int2 r = ranges[t];
  auto push = [&](int node) {
    if (node >= 0) stack[sp++] = node; // cusafe-expect: stack-buffer-overflow
  };
  push(root);
  while (sp > 0) {
    int nd = stack[--sp];
    int k = key[nd];
    found += k >= r.x && k <= r.y;
    if (k >= r.x) push(left[nd]);
    if (k <= r.y) push(right[nd]);
  }
  count[t] = found;
}

int main() {
  // A comb: node i (key 2i + 1) has a leaf on the left (key 2i) and node i + 1 on the right.
  const int depth = 20, nodes = 2 * depth;
  std::vector<int> key(nodes), left(nodes, -1), right(nodes, -1);
  for (int i = 0; i < depth; ++i) {
    key[i] = 2 * i + 1;
    key[depth + i] = 2 * i;
    left[i] = depth + i;
    right[i] = i + 1 < depth ? i + 1 : -1;
  }
  const int q = 32;
  std::vector<int2> ranges(q);
  for (int t = 0; t < q; ++t) ranges[t] = make_int2(t, t + 50);
  int *dk, *dl, *dr, *count;
  int2 *dq;
  CK(cudaMalloc(&dk, nodes * sizeof(int)));
  CK(cudaMalloc(&dl, nodes * sizeof(int)));
  CK(cudaMalloc(&dr, nodes * sizeof(int)));
  CK(cudaMalloc(&dq, q * sizeof(int2)));
  CK(cudaMalloc(&count, q * sizeof(int)));
  CK(cudaMemcpy(dk, key.data(), nodes * sizeof(int), cudaMemcpyHostToDevice));
  CK(cudaMemcpy(dl, left.data(), nodes * sizeof(int), cudaMemcpyHostToDevice));
  CK(cudaMemcpy(dr, right.data(), nodes * sizeof(int), cudaMemcpyHostToDevice));
  CK(cudaMemcpy(dq, ranges.data(), q * sizeof(int2), cudaMemcpyHostToDevice));
  count_range<<<1, q>>>(dk, dl, dr, 0, dq, count, q);
  CK(cudaDeviceSynchronize());
  std::vector<int> h(q);
  CK(cudaMemcpy(h.data(), count, q * sizeof(int), cudaMemcpyDeviceToHost));
  std::printf("keys in [0,50]: %d, in [31,81]: %d\n", h[0], h[31]);
  CK(cudaFree(dk));
  CK(cudaFree(dl));
  CK(cudaFree(dr));
  CK(cudaFree(dq));
  CK(cudaFree(count));
  return 0;
}
