// A non-inlined feature extractor fills a caller-provided local array of 8 floats.
// Its loop runs "i <= n" and writes one element past the caller's array: the write
// happens in the callee's frame, the damaged object is in the caller's frame.
// Bug: stack-buffer-overflow, WRITE (local, cross-frame).
#include "../../examples/common.h"
#include <vector>

constexpr int F = 8;

__device__ __noinline__ void extract(const float *px, int n, float *feat) {
  for (int i = 0; i <= n; ++i) feat[i] = px[i] * px[i]; // cusafe-expect: stack-buffer-overflow
}

__global__ void classify(const float *pixels, const float *w, int *label, int count) {
  int t = blockIdx.x * blockDim.x + threadIdx.x;
  if (t >= count) return;
  float feat[F];
  int votes[2] = {0, 0};
  extract(pixels + t * (F + 1), F, feat);
  for (int i = 0; i < F; ++i) votes[feat[i] * w[i] > 0.5f]++;
  label[t] = votes[1] > votes[0];
}

int main() {
  const int count = 128;
  std::vector<float> px(count * (F + 1)), w(F);
  for (int i = 0; i < count * (F + 1); ++i) px[i] = float(i % 5) * 0.5f;
  for (int i = 0; i < F; ++i) w[i] = 0.5f + 0.1f * i;
  float *dpx, *dw;
  int *label;
  CK(cudaMalloc(&dpx, px.size() * sizeof(float)));
  CK(cudaMalloc(&dw, F * sizeof(float)));
  CK(cudaMalloc(&label, count * sizeof(int)));
  CK(cudaMemcpy(dpx, px.data(), px.size() * sizeof(float), cudaMemcpyHostToDevice));
  CK(cudaMemcpy(dw, w.data(), F * sizeof(float), cudaMemcpyHostToDevice));
  classify<<<1, count>>>(dpx, dw, label, count);
  CK(cudaDeviceSynchronize());
  std::vector<int> h(count);
  CK(cudaMemcpy(h.data(), label, count * sizeof(int), cudaMemcpyDeviceToHost));
  int pos = 0;
  for (int v : h) pos += v;
  std::printf("%d of %d labelled positive\n", pos, count);
  CK(cudaFree(dpx));
  CK(cudaFree(dw));
  CK(cudaFree(label));
  return 0;
}
