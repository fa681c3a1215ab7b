// Model hot-reload: a layer's weights are freed and reloaded, but an inference
// descriptor copied earlier keeps the old pointer. Between the free and the stale
// use, a warm-up allocates and frees 3000 activation buffers of many sizes (more
// than any 8-bit tag space), so an allocator that reuses addresses has long since
// handed the freed memory out again. Bug: use-after-free, READ (delayed).
#include "../../examples/common.h"
#include <vector>

struct Layer {
  float *weights;
  int n;
};

__global__ void apply(const float *w, const float *x, float *y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = w[i] * x[i]; // cusafe-expect: use-after-free
}

static void load(Layer &l, float value) {
  std::vector<float> h(l.n, value);
  CK(cudaMalloc(&l.weights, l.n * sizeof(float)));
  CK(cudaMemcpy(l.weights, h.data(), l.n * sizeof(float), cudaMemcpyHostToDevice));
}

int main() {
  Layer layer{nullptr, 2048};
  load(layer, 0.5f);
  Layer infer = layer; // shallow copy taken by the inference path
  CK(cudaFree(layer.weights));
  for (int k = 0; k < 3000; ++k) { // warm-up of the new model's activations
    void *act;
    size_t size = 256 + (size_t)(k * 7919 % 64) * 1024;
    CK(cudaMalloc(&act, size));
    CK(cudaMemset(act, 0, size));
    CK(cudaFree(act));
  }
  load(layer, 2.0f);
  float *x, *y;
  CK(cudaMalloc(&x, layer.n * sizeof(float)));
  CK(cudaMalloc(&y, layer.n * sizeof(float)));
  std::vector<float> h(layer.n, 3.0f);
  CK(cudaMemcpy(x, h.data(), layer.n * sizeof(float), cudaMemcpyHostToDevice));
  apply<<<layer.n / 256, 256>>>(infer.weights, x, y, infer.n);
  CK(cudaDeviceSynchronize());
  std::printf("inference ran\n");
  CK(cudaFree(layer.weights));
  CK(cudaFree(x));
  CK(cudaFree(y));
  return 0;
}
