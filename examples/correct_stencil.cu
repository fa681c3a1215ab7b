// Correct: legal but tricky idioms that must not be reported.
// - one-past-the-end pointer loops (p != end), pointer comparisons against end;
// - a temporary pointer before the start (p - 1) used only after adding 1 back;
// - pointers stored into device memory by one kernel and dereferenced by another;
// - memcpy/memset inside a kernel (llvm.memcpy), vector loads on aligned data;
// - many allocations of many sizes, including a large (> 2 MiB) one.
#include "common.h"

struct Span {
  float *begin;
  float *end;
};

__global__ void make_spans(float *base, Span *spans, int chunk, int count) {
  int s = blockIdx.x * blockDim.x + threadIdx.x;
  if (s < count) spans[s] = Span{base + s * chunk, base + (s + 1) * chunk};
}

__global__ void sum_spans(const Span *spans, float *out, int count) {
  int s = blockIdx.x * blockDim.x + threadIdx.x;
  if (s >= count) return;
  float acc = 0;
  for (const float *p = spans[s].begin; p != spans[s].end; ++p) acc += *p;
  const float *before = spans[s].begin - 1; // benign: never dereferenced as is
  acc += before[1] * 0.0f;
  out[s] = acc;
}

struct Pair {
  float4 v;
  int tag[4];
};

__global__ void copy_structs(const Pair *in, Pair *out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    Pair tmp;
    memcpy(&tmp, &in[i], sizeof(Pair));
    tmp.tag[3] = i;
    memcpy(&out[i], &tmp, sizeof(Pair));
    if (i == n - 1) memset(&out[i].tag[0], 0, 3 * sizeof(int)); // same thread: no race
  }
}

int main() {
  const int chunk = 100, count = 64, n = chunk * count;
  float *base, *out;
  Span *spans;
  CK(cudaMalloc(&base, n * sizeof(float)));
  CK(cudaMalloc(&out, count * sizeof(float)));
  CK(cudaMalloc(&spans, count * sizeof(Span)));
  float *h = new float[n];
  for (int i = 0; i < n; ++i) h[i] = float(i % 10);
  CK(cudaMemcpy(base, h, n * sizeof(float), cudaMemcpyHostToDevice));
  make_spans<<<1, count>>>(base, spans, chunk, count);
  sum_spans<<<1, count>>>(spans, out, count);
  float ho[count];
  CK(cudaMemcpy(ho, out, sizeof ho, cudaMemcpyDeviceToHost));
  double total = 0;
  for (float v : ho) total += v;
  std::printf("spans total %.1f\n", total);

  const int m = 1000;
  Pair *pin, *pout;
  CK(cudaMalloc(&pin, m * sizeof(Pair)));
  CK(cudaMalloc(&pout, m * sizeof(Pair)));
  CK(cudaMemset(pin, 1, m * sizeof(Pair)));
  copy_structs<<<(m + 127) / 128, 128>>>(pin, pout, m);
  Pair last;
  CK(cudaMemcpy(&last, pout + m - 1, sizeof last, cudaMemcpyDeviceToHost));
  std::printf("last tags %d %d %d %d\n", last.tag[0], last.tag[1], last.tag[2], last.tag[3]);

  // Many sizes, some large; every one freed.
  size_t sizes[] = {1, 7, 256, 4096, 65536, (1u << 21) - 300, 3u << 21, 100u << 20};
  for (int round = 0; round < 50; ++round)
    for (size_t s : sizes) {
      void *p;
      CK(cudaMalloc(&p, s));
      CK(cudaMemset(p, round, s));
      CK(cudaFree(p));
    }
  std::printf("alloc rounds ok\n");
  CK(cudaFree(base));
  CK(cudaFree(out));
  CK(cudaFree(spans));
  CK(cudaFree(pin));
  CK(cudaFree(pout));
  delete[] h;
  return 0;
}
