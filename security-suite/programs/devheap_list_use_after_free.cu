// A frame's work lists on the device heap: build_lists lets each block's first thread
// link the block's work items above a threshold into a list of nodes made with new,
// the heads kept in global memory; release_lists ends the frame and deletes every node
// but leaves the heads; a statistics kernel, moved after the cleanup, still reads each
// block's head node through the kept pointer (every list is non-empty). The plain
// build reads the stale nodes silently; the output does not depend on them.
// Bug: use-after-free, READ (device heap, freed by an earlier launch).
#include "../../examples/common.h"
#include <vector>

struct Item {
  int value;
  Item *next;
};

__global__ void build_lists(const int *vals, int per_block, int threshold, Item **heads) {
  if (threadIdx.x != 0) return;
  Item *head = nullptr;
  for (int i = 0; i < per_block; ++i) {
    int v = vals[blockIdx.x * per_block + i];
    if (v <= threshold) continue;
    Item *it = new Item{v, head};
    if (!it) break; // device heap exhausted: keep what we have
    head = it;
  }
  heads[blockIdx.x] = head;
}

__global__ void release_lists(Item *const *heads, int *released) {
  if (threadIdx.x != 0) return;
  int n = 0;
  for (Item *p = heads[blockIdx.x]; p;) {
    Item *next = p->next;
    delete p;
    p = next;
    ++n;
  }
  atomicAdd(released, n); // heads[blockIdx.x] still points at the first node
}

__global__ void first_items(Item *const *heads, int *first) {
  if (threadIdx.x != 0) return;
  const Item *h = heads[blockIdx.x];
  first[blockIdx.x] = h ? h->value : -1; // cusafe-expect: use-after-free
}

int main() {
  const int blocks = 16, per_block = 64, threshold = 50;
  std::vector<int> v(blocks * per_block);
  for (size_t i = 0; i < v.size(); ++i) v[i] = int(i * 37 % 100);
  int *dv, *released, *first;
  Item **heads;
  CK(cudaMalloc(&dv, v.size() * sizeof(int)));
  CK(cudaMalloc(&heads, blocks * sizeof(Item *)));
  CK(cudaMalloc(&released, sizeof(int)));
  CK(cudaMalloc(&first, blocks * sizeof(int)));
  CK(cudaMemcpy(dv, v.data(), v.size() * sizeof(int), cudaMemcpyHostToDevice));
  CK(cudaMemset(released, 0, sizeof(int)));
  build_lists<<<blocks, 32>>>(dv, per_block, threshold, heads);
  release_lists<<<blocks, 32>>>(heads, released);
  first_items<<<blocks, 32>>>(heads, first);
  CK(cudaDeviceSynchronize());
  int nrel = 0;
  CK(cudaMemcpy(&nrel, released, sizeof nrel, cudaMemcpyDeviceToHost));
  std::printf("frame done: %d work items released, statistics for %d blocks\n", nrel, blocks);
  CK(cudaFree(dv));
  CK(cudaFree(heads));
  CK(cudaFree(released));
  CK(cudaFree(first));
  return 0;
}
