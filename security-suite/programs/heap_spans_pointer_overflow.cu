// Ragged batch: a setup kernel turns per-item offsets into (begin, end) pointers
// stored in device memory; a second kernel walks each span. One offset is corrupt
// and sends its span far outside the pool (here into another live buffer, as an
// allocator that packs buffers back to back would). The bad pointer is made by
// arithmetic in one kernel, stored, and dereferenced in another.
// Bug: pointer-overflow (a pointer that left its buffer is dereferenced).
#include "../../examples/common.h"
#include <vector>

struct Span {
  const float *begin, *end;
};

__global__ void make_spans(const float *pool, const long long *off, const int *len, Span *spans,
                           int items) {
  int s = blockIdx.x * blockDim.x + threadIdx.x;
  if (s < items) spans[s] = Span{pool + off[s], pool + off[s] + len[s]};
}

__global__ void sum_spans(const Span *spans, float *out, int items) {
  int s = blockIdx.x * blockDim.x + threadIdx.x;
  if (s >= items) return;
  float acc = 0;
  for (const float *p = spans[s].begin; p != spans[s].end; ++p) acc += *p; // cusafe-expect: pointer-overflow
  out[s] = acc;
}

int main() {
  const int items = 64;
  std::vector<long long> off(items);
  std::vector<int> len(items);
  long long total = 0;
  for (int s = 0; s < items; ++s) {
    len[s] = 10 + (s * 7) % 50;
    off[s] = total;
    total += len[s];
  }
  float *pool, *other, *out;
  long long *doff;
  int *dlen;
  Span *spans;
  CK(cudaMalloc(&pool, total * sizeof(float)));
  CK(cudaMalloc(&other, 4096 * sizeof(float)));
  CK(cudaMalloc(&out, items * sizeof(float)));
  CK(cudaMalloc(&doff, items * sizeof(long long)));
  CK(cudaMalloc(&dlen, items * sizeof(int)));
  CK(cudaMalloc(&spans, items * sizeof(Span)));
  off[41] = (other - pool) + 64; // the corrupt offset
  std::vector<float> h(total, 1.0f);
  CK(cudaMemcpy(pool, h.data(), total * sizeof(float), cudaMemcpyHostToDevice));
  CK(cudaMemset(other, 0, 4096 * sizeof(float)));
  CK(cudaMemcpy(doff, off.data(), items * sizeof(long long), cudaMemcpyHostToDevice));
  CK(cudaMemcpy(dlen, len.data(), items * sizeof(int), cudaMemcpyHostToDevice));
  make_spans<<<1, items>>>(pool, doff, dlen, spans, items);
  sum_spans<<<1, items>>>(spans, out, items);
  CK(cudaDeviceSynchronize());
  std::vector<float> o(items);
  CK(cudaMemcpy(o.data(), out, items * sizeof(float), cudaMemcpyDeviceToHost));
  std::printf("span 0 sum %.0f, span 41 sum %.0f\n", o[0], o[41]);
  CK(cudaFree(pool));
  CK(cudaFree(other));
  CK(cudaFree(out));
  CK(cudaFree(doff));
  CK(cudaFree(dlen));
  CK(cudaFree(spans));
  return 0;
}
