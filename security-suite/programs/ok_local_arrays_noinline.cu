// Correct: per-thread local arrays handed to non-inlined functions: a 3x3 median
// filter that gathers the window into a local array and sorts it in a callee, a
// callee that fills a caller's local array of structs, and a callee that returns a
// value computed from a local array of its own (no pointer outlives its frame).
#include "../../examples/common.h"
#include <vector>

struct Stat {
  float lo, hi;
};

__device__ __noinline__ void sort9(float *w) {
  for (int i = 1; i < 9; ++i) {
    float v = w[i];
    int j = i - 1;
    while (j >= 0 && w[j] > v) {
      w[j + 1] = w[j];
      --j;
    }
    w[j + 1] = v;
  }
}

__device__ __noinline__ void min_max(const float *w, int n, Stat *out, int k) {
  Stat s{w[0], w[0]};
  for (int i = 1; i < n; ++i) {
    s.lo = fminf(s.lo, w[i]);
    s.hi = fmaxf(s.hi, w[i]);
  }
  out[k] = s;
}

__device__ __noinline__ float trimmed_mean(const float *w, int n) {
  float tmp[9];
  for (int i = 0; i < n; ++i) tmp[i] = w[i];
  float s = 0;
  for (int i = 1; i < n - 1; ++i) s += tmp[i];
  return s / (n - 2);
}

__global__ void median3x3(const float *img, float *med, float *range, float *mean, int w, int h) {
  int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x >= w || y >= h) return;
  float win[9];
  Stat stats[2];
  int k = 0;
  for (int dy = -1; dy <= 1; ++dy)
    for (int dx = -1; dx <= 1; ++dx)
      win[k++] = img[min(max(y + dy, 0), h - 1) * w + min(max(x + dx, 0), w - 1)];
  min_max(win, 9, stats, 0);
  sort9(win);
  min_max(win + 3, 3, stats, 1);
  med[y * w + x] = win[4];
  range[y * w + x] = (stats[0].hi - stats[0].lo) + (stats[1].hi - stats[1].lo);
  mean[y * w + x] = trimmed_mean(win, 9);
}

int main() {
  const int w = 128, h = 64, n = w * h;
  std::vector<float> img(n);
  for (int i = 0; i < n; ++i) img[i] = float((i * 37) % 17);
  float *di, *med, *rng, *mean;
  CK(cudaMalloc(&di, n * sizeof(float)));
  CK(cudaMalloc(&med, n * sizeof(float)));
  CK(cudaMalloc(&rng, n * sizeof(float)));
  CK(cudaMalloc(&mean, n * sizeof(float)));
  CK(cudaMemcpy(di, img.data(), n * sizeof(float), cudaMemcpyHostToDevice));
  median3x3<<<dim3(w / 16, h / 16), dim3(16, 16)>>>(di, med, rng, mean, w, h);
  std::vector<float> a(n), b(n), c(n);
  CK(cudaMemcpy(a.data(), med, n * sizeof(float), cudaMemcpyDeviceToHost));
  CK(cudaMemcpy(b.data(), rng, n * sizeof(float), cudaMemcpyDeviceToHost));
  CK(cudaMemcpy(c.data(), mean, n * sizeof(float), cudaMemcpyDeviceToHost));
  double sa = 0, sb = 0, sc = 0;
  for (int i = 0; i < n; ++i) {
    sa += a[i];
    sb += b[i];
    sc += c[i];
  }
  std::printf("median sum %.0f, range sum %.0f, trimmed mean sum %.2f\n", sa, sb, sc);
  CK(cudaFree(di));
  CK(cudaFree(med));
  CK(cudaFree(rng));
  CK(cudaFree(mean));
  return 0;
}
