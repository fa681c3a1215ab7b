// Embedding lookup and scoring: each token's row of the embedding table is passed to
// a non-inlined dot product. Padding tokens carry the id -1 and should be skipped;
// the kernel forgets, so the padding token's row pointer lands one row (512 bytes)
// before the table, outside its allocation, and the callee dereferences it.
// Bug: pointer-overflow (a pointer argument that left its buffer is dereferenced).
#include "../../examples/common.h"
#include <vector>

__device__ __noinline__ float dot(const float *a, const float *b, int n) {
  float acc = 0;
  for (int k = 0; k < n; ++k) acc += a[k] * b[k]; // cusafe-expect: pointer-overflow
  return acc;
}

__global__ void score_tokens(const float *table, const int *ids, const float *query, float *score,
                             int tokens, int dim) {
  int t = blockIdx.x * blockDim.x + threadIdx.x;
  if (t < tokens) score[t] = dot(table + ids[t] * dim, query, dim);
}

int main() {
  const int vocab = 64, dim = 128, tokens = 96;
  std::vector<float> tab(vocab * dim), q(dim);
  for (int i = 0; i < vocab * dim; ++i) tab[i] = float(i % 7) - 3.0f;
  for (int k = 0; k < dim; ++k) q[k] = float(k % 3);
  std::vector<int> ids(tokens);
  for (int t = 0; t < tokens; ++t) ids[t] = (t * 37) % vocab;
  ids[tokens - 1] = -1; // the padded tail of the sequence
  float *query, *score, *table;
  int *dids;
  CK(cudaMalloc(&query, dim * sizeof(float)));
  CK(cudaMalloc(&score, tokens * sizeof(float)));
  CK(cudaMalloc(&dids, tokens * sizeof(int)));
  CK(cudaMalloc(&table, tab.size() * sizeof(float)));
  CK(cudaMemcpy(table, tab.data(), tab.size() * sizeof(float), cudaMemcpyHostToDevice));
  CK(cudaMemcpy(query, q.data(), dim * sizeof(float), cudaMemcpyHostToDevice));
  CK(cudaMemcpy(dids, ids.data(), tokens * sizeof(int), cudaMemcpyHostToDevice));
  score_tokens<<<1, tokens>>>(table, dids, query, score, tokens, dim);
  CK(cudaDeviceSynchronize());
  std::vector<float> s(tokens);
  CK(cudaMemcpy(s.data(), score, tokens * sizeof(float), cudaMemcpyDeviceToHost));
  double sum = 0;
  for (int t = 0; t < tokens - 1; ++t) sum += s[t];
  std::printf("scores of %d real tokens sum to %.1f\n", tokens - 1, sum);
  CK(cudaFree(query));
  CK(cudaFree(score));
  CK(cudaFree(dids));
  CK(cudaFree(table));
  return 0;
}
