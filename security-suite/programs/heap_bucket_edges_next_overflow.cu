// Bucketing keys by explicit edges, one block per key and one thread per bucket: thread
// t takes the key when edges[t] <= key < edges[t + 1]. The edges were allocated for
// `buckets` entries instead of `buckets + 1`, so for a key at or above the last edge
// the last bucket's thread reads edges[buckets], one element past the end; the read of
// edges[t + 1] runs only where edges[t] <= key held, so only that thread and only for
// such keys make it. 4 bytes past the end, it lands in the allocation's rounding slack,
// which compute-sanitizer's memcheck does not flag. Bug: heap-buffer-overflow, READ
// (linear, 4 bytes past the end of a 1 KiB buffer).
#include "../../examples/common.h"
#include <vector>

__global__ void bucketize(const int *edges, int buckets, const int *keys, int *bucket_of) {
  int t = threadIdx.x, q = blockIdx.x;
  int key = keys[q];
  if (t < buckets && edges[t] <= key &&
      edges[t + 1] > key) // cusafe-expect: heap-buffer-overflow
    bucket_of[q] = t;
}

int main() {
  const int buckets = 256, nkeys = 64;
  std::vector<int> edges(buckets), keys(nkeys);
  for (int i = 0; i < buckets; ++i) edges[i] = 10 * i;
  for (int q = 0; q < nkeys; ++q) keys[q] = 41 * q; // the last keys lie above edges[255]
  int *d_edges, *d_keys, *d_out;
  CK(cudaMalloc(&d_edges, buckets * sizeof(int))); // one edge short
  CK(cudaMalloc(&d_keys, nkeys * sizeof(int)));
  CK(cudaMalloc(&d_out, nkeys * sizeof(int)));
  CK(cudaMemcpy(d_edges, edges.data(), buckets * sizeof(int), cudaMemcpyHostToDevice));
  CK(cudaMemcpy(d_keys, keys.data(), nkeys * sizeof(int), cudaMemcpyHostToDevice));
  CK(cudaMemset(d_out, 0xff, nkeys * sizeof(int)));
  bucketize<<<nkeys, buckets>>>(d_edges, buckets, d_keys, d_out);
  CK(cudaDeviceSynchronize());
  std::vector<int> out(nkeys);
  CK(cudaMemcpy(out.data(), d_out, nkeys * sizeof(int), cudaMemcpyDeviceToHost));
  long sum = 0;
  for (int v : out) sum += v;
  std::printf("bucketize checksum %ld\n", sum);
  CK(cudaFree(d_edges));
  CK(cudaFree(d_keys));
  CK(cudaFree(d_out));
  return 0;
}
