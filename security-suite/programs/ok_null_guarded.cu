// Correct: null pointers that are never dereferenced.
// - blend takes an optional mask, an optional per-column bias and an optional debug
//   output, each null when absent and each guarded (`if (p)`, `p ? p[i] : d`, a
//   __noinline__ helper that checks its possibly null argument); it runs once with the
//   mask and debug output absent and once with the bias absent;
// - apply_layers walks a device table of layer pointers up to its nullptr sentinel.
#include "../../examples/common.h"
#include <vector>

__device__ __noinline__ float bias_of(const float *bias, int c) { return bias ? bias[c] : 0.0f; }

__global__ void blend(const float *a, const float *b, const float *mask, const float *bias,
                      float *debug, float *out, int n, int cols) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  float m = mask ? mask[i] : 0.5f;
  float v = a[i] * m + b[i] * (1.0f - m) + bias_of(bias, i % cols);
  if (debug) debug[i] = m;
  out[i] = v;
}

__global__ void apply_layers(const float *const *layers, float *x, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  float v = x[i];
  for (const float *const *l = layers; *l; ++l) v = v * 0.5f + (*l)[i];
  x[i] = v;
}

int main() {
  const int cols = 64, rows = 32, n = cols * rows, nlayers = 3;
  std::vector<float> ha(n), hb(n), hm(n), hbias(cols), out(n), dbg(n);
  for (int i = 0; i < n; ++i) {
    ha[i] = float(i % 9);
    hb[i] = float(i % 4);
    hm[i] = float(i % 5) * 0.25f;
  }
  for (int c = 0; c < cols; ++c) hbias[c] = float(c % 3);
  float *a, *b, *mask, *bias, *debug, *o1, *o2;
  CK(cudaMalloc(&a, n * sizeof(float)));
  CK(cudaMalloc(&b, n * sizeof(float)));
  CK(cudaMalloc(&mask, n * sizeof(float)));
  CK(cudaMalloc(&debug, n * sizeof(float)));
  CK(cudaMalloc(&o1, n * sizeof(float)));
  CK(cudaMalloc(&o2, n * sizeof(float)));
  CK(cudaMalloc(&bias, cols * sizeof(float)));
  CK(cudaMemcpy(a, ha.data(), n * sizeof(float), cudaMemcpyHostToDevice));
  CK(cudaMemcpy(b, hb.data(), n * sizeof(float), cudaMemcpyHostToDevice));
  CK(cudaMemcpy(mask, hm.data(), n * sizeof(float), cudaMemcpyHostToDevice));
  CK(cudaMemcpy(bias, hbias.data(), cols * sizeof(float), cudaMemcpyHostToDevice));
  blend<<<n / 128, 128>>>(a, b, nullptr, bias, nullptr, o1, n, cols);
  blend<<<n / 128, 128>>>(a, b, mask, nullptr, debug, o2, n, cols);

  std::vector<float *> lp(nlayers + 1, nullptr); // the last entry is the sentinel
  for (int l = 0; l < nlayers; ++l) {
    CK(cudaMalloc(&lp[l], n * sizeof(float)));
    std::vector<float> h(n, float(l + 1));
    CK(cudaMemcpy(lp[l], h.data(), n * sizeof(float), cudaMemcpyHostToDevice));
  }
  float **table;
  CK(cudaMalloc(&table, lp.size() * sizeof(float *)));
  CK(cudaMemcpy(table, lp.data(), lp.size() * sizeof(float *), cudaMemcpyHostToDevice));
  apply_layers<<<n / 128, 128>>>(table, o2, n);
  CK(cudaDeviceSynchronize());

  double s1 = 0, s2 = 0, sd = 0;
  CK(cudaMemcpy(out.data(), o1, n * sizeof(float), cudaMemcpyDeviceToHost));
  for (float v : out) s1 += v;
  CK(cudaMemcpy(out.data(), o2, n * sizeof(float), cudaMemcpyDeviceToHost));
  for (float v : out) s2 += v;
  CK(cudaMemcpy(dbg.data(), debug, n * sizeof(float), cudaMemcpyDeviceToHost));
  for (float v : dbg) sd += v;
  std::printf("no mask: %.2f, masked + layers: %.2f, debug mask sum %.2f\n", s1, s2, sd);
  for (float *p : {a, b, mask, bias, debug, o1, o2}) CK(cudaFree(p));
  CK(cudaFree(table));
  for (int l = 0; l < nlayers; ++l) CK(cudaFree(lp[l]));
  return 0;
}
