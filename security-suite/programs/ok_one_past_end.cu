// Correct: one-past-the-end pointers everywhere, as the C++ standard allows them.
// - [begin, end) spans stored in device memory, the last one ending exactly at the
//   end of its allocation; forward (p != end) and backward (--p until begin) walks;
// - a device lower_bound that returns `last` when the key is larger than every
//   element, compared against last and never dereferenced then;
// - end pointers reloaded from device memory by a second kernel.
#include "../../examples/common.h"
#include <vector>

struct Span {
  const int *begin, *end;
};

__device__ const int *lower_bound(const int *first, const int *last, int key) {
  while (first != last) {
    const int *mid = first + (last - first) / 2;
    if (*mid < key)
      first = mid + 1;
    else
      last = mid;
  }
  return first;
}

__global__ void make_spans(const int *sorted, int n, int parts, Span *spans) {
  int s = threadIdx.x;
  if (s < parts) spans[s] = Span{sorted + (long long)n * s / parts, sorted + (long long)n * (s + 1) / parts};
}

__global__ void walk(const Span *spans, int parts, const int *keys, int *fwd, int *bwd, int *rank) {
  int s = threadIdx.x;
  if (s >= parts) return;
  Span sp = spans[s];
  int a = 0, b = 0;
  for (const int *p = sp.begin; p != sp.end; ++p) a += *p;
  for (const int *p = sp.end; p != sp.begin;) b += *--p;
  fwd[s] = a;
  bwd[s] = b;
  const int *hit = lower_bound(sp.begin, sp.end, keys[s]);
  rank[s] = hit == sp.end ? -1 : int(hit - sp.begin);
}

int main() {
  const int n = 10000, parts = 64;
  std::vector<int> h(n);
  for (int i = 0; i < n; ++i) h[i] = 3 * i;
  std::vector<int> keys(parts);
  for (int s = 0; s < parts; ++s) keys[s] = s % 2 ? 1 << 30 : 3 * (n * s / parts) + 7; // odd: past the end
  int *sorted, *dkeys, *fwd, *bwd, *rank;
  Span *spans;
  CK(cudaMalloc(&sorted, n * sizeof(int)));
  CK(cudaMalloc(&dkeys, parts * sizeof(int)));
  CK(cudaMalloc(&fwd, parts * sizeof(int)));
  CK(cudaMalloc(&bwd, parts * sizeof(int)));
  CK(cudaMalloc(&rank, parts * sizeof(int)));
  CK(cudaMalloc(&spans, parts * sizeof(Span)));
  CK(cudaMemcpy(sorted, h.data(), n * sizeof(int), cudaMemcpyHostToDevice));
  CK(cudaMemcpy(dkeys, keys.data(), parts * sizeof(int), cudaMemcpyHostToDevice));
  make_spans<<<1, parts>>>(sorted, n, parts, spans);
  walk<<<1, parts>>>(spans, parts, dkeys, fwd, bwd, rank);
  std::vector<int> f(parts), b(parts), r(parts);
  CK(cudaMemcpy(f.data(), fwd, parts * sizeof(int), cudaMemcpyDeviceToHost));
  CK(cudaMemcpy(b.data(), bwd, parts * sizeof(int), cudaMemcpyDeviceToHost));
  CK(cudaMemcpy(r.data(), rank, parts * sizeof(int), cudaMemcpyDeviceToHost));
  long long total = 0;
  int same = 0, misses = 0;
  for (int s = 0; s < parts; ++s) {
    total += f[s];
    same += f[s] == b[s];
    misses += r[s] == -1;
  }
  std::printf("total %lld, %d/%d spans agree both ways, %d keys past the end, rank[2]=%d\n", total,
              same, parts, misses, r[2]);
  CK(cudaFree(sorted));
  CK(cudaFree(dkeys));
  CK(cudaFree(fwd));
  CK(cudaFree(bwd));
  CK(cudaFree(rank));
  CK(cudaFree(spans));
  return 0;
}
