// k-nearest-neighbour search, one query per thread, keeping the K best distances and
// their ids in two local arrays. The insertion shifts the list down starting from
// `count` without capping it at K - 1, so once the list is full an insertion writes
// best_d[K], past the array, into the neighbouring local array of the same frame.
// Bug: stack-buffer-overflow, WRITE (local, in-frame, into the neighbouring array).
#include "../../examples/common.h"
#include <vector>

constexpr int K = 8;

__global__ void knn(const float *pts, const float *queries, int n, int q, int *nearest) {
  int t = blockIdx.x * blockDim.x + threadIdx.x;
  if (t >= q) return;
  float best_d[K];
  int best_i[K];
  int count = 0;
  for (int p = 0; p < n; ++p) {
    float dx = pts[2 * p] - queries[2 * t], dy = pts[2 * p + 1] - queries[2 * t + 1];
    float d = dx * dx + dy * dy;
    if (count == K && d >= best_d[K - 1]) continue;
    int j = count;
    for (; j > 0 && best_d[j - 1] > d; --j) {
      best_d[j] = best_d[j - 1]; // cusafe-expect: stack-buffer-overflow
      best_i[j] = best_i[j - 1];
    }
    best_d[j] = d;
    best_i[j] = p;
    if (count < K) ++count;
  }
  nearest[t] = best_i[0];
}

int main() {
  const int n = 512, q = 64;
  std::vector<float> pts(2 * n), qs(2 * q);
  for (int p = 0; p < n; ++p) {
    pts[2 * p] = float((p * 37) % 101);
    pts[2 * p + 1] = float((p * 53) % 97);
  }
  for (int t = 0; t < q; ++t) {
    qs[2 * t] = float((t * 11) % 101) + 0.25f;
    qs[2 * t + 1] = float((t * 29) % 97) + 0.5f;
  }
  float *dp, *dq;
  int *nearest;
  CK(cudaMalloc(&dp, pts.size() * sizeof(float)));
  CK(cudaMalloc(&dq, qs.size() * sizeof(float)));
  CK(cudaMalloc(&nearest, q * sizeof(int)));
  CK(cudaMemcpy(dp, pts.data(), pts.size() * sizeof(float), cudaMemcpyHostToDevice));
  CK(cudaMemcpy(dq, qs.data(), qs.size() * sizeof(float), cudaMemcpyHostToDevice));
  knn<<<1, q>>>(dp, dq, n, q, nearest);
  CK(cudaDeviceSynchronize());
  std::vector<int> h(q);
  CK(cudaMemcpy(h.data(), nearest, q * sizeof(int), cudaMemcpyDeviceToHost));
  std::printf("nearest of query 0: %d, of query 63: %d\n", h[0], h[63]);
  CK(cudaFree(dp));
  CK(cudaFree(dq));
  CK(cudaFree(nearest));
  return 0;
}
