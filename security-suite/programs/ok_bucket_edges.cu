// Correct: bucketing keys by explicit edges, one block per key and one thread per
// bucket (thread t takes the key when edges[t] <= key < edges[t + 1]), with all
// `buckets + 1` edges allocated. The read of edges[t + 1] runs only where edges[t] <= key
// held. The keys reach both ends: below the first edge, on the first, on the last
// bucket's lower edge, and on the last edge itself, where the last thread reads
// edges[buckets], the buffer's last element. None of it may be reported.
#include "../../examples/common.h"
#include <vector>

__global__ void bucketize(const int *edges, int buckets, const int *keys, int *bucket_of) {
  int t = threadIdx.x, q = blockIdx.x;
  int key = keys[q];
  if (t < buckets && edges[t] <= key && edges[t + 1] > key)
    bucket_of[q] = t;
}

int main() {
  const int buckets = 256;
  std::vector<int> edges(buckets + 1);
  for (int i = 0; i <= buckets; ++i) edges[i] = 10 * i;
  std::vector<int> keys = {-5, 0, 7, 1234, 10 * (buckets - 1), 10 * buckets - 1, 10 * buckets,
                           10 * buckets + 99};
  const int nkeys = (int)keys.size();
  int *d_edges, *d_keys, *d_out;
  CK(cudaMalloc(&d_edges, edges.size() * sizeof(int)));
  CK(cudaMalloc(&d_keys, nkeys * sizeof(int)));
  CK(cudaMalloc(&d_out, nkeys * sizeof(int)));
  CK(cudaMemcpy(d_edges, edges.data(), edges.size() * sizeof(int), cudaMemcpyHostToDevice));
  CK(cudaMemcpy(d_keys, keys.data(), nkeys * sizeof(int), cudaMemcpyHostToDevice));
  CK(cudaMemset(d_out, 0xff, nkeys * sizeof(int)));
  bucketize<<<nkeys, buckets>>>(d_edges, buckets, d_keys, d_out);
  CK(cudaDeviceSynchronize());
  std::vector<int> out(nkeys);
  CK(cudaMemcpy(out.data(), d_out, nkeys * sizeof(int), cudaMemcpyDeviceToHost));
  int bad = 0;
  for (int q = 0; q < nkeys; ++q) {
    int want = -1;
    for (int t = 0; t < buckets; ++t)
      if (edges[t] <= keys[q] && edges[t + 1] > keys[q]) want = t;
    if (out[q] != want) {
      std::printf("key %d: bucket %d, expected %d\n", keys[q], out[q], want);
      ++bad;
    }
  }
  std::printf("bucketize: %d keys, %d wrong\n", nkeys, bad);
  CK(cudaFree(d_edges));
  CK(cudaFree(d_keys));
  CK(cudaFree(d_out));
  return bad ? 1 : 0;
}
