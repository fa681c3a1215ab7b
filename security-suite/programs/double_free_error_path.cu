// A loader frees its buffer when validation fails and returns an error, but leaves
// the caller's pointer set; the caller's cleanup frees it again.
// Bug: double-free (host side).
#include "../../examples/common.h"
#include <limits>
#include <vector>

struct Model {
  float *weights = nullptr;
  int n = 0;
};

static bool load(Model &m, const std::vector<float> &file) {
  m.n = (int)file.size();
  CK(cudaMalloc(&m.weights, m.n * sizeof(float)));
  CK(cudaMemcpy(m.weights, file.data(), m.n * sizeof(float), cudaMemcpyHostToDevice));
  for (float v : file)
    if (v != v) { // NaN in the file: reject it
      CK(cudaFree(m.weights)); // ...but m.weights is not reset
      return false;
    }
  return true;
}

static void cleanup(Model &m) {
  if (m.weights) {
    cudaError_t e = cudaFree(m.weights); // cusafe-expect: double-free
    std::printf("cleanup: cudaFree returned %d\n", int(e));
  }
}

int main() {
  std::vector<float> file(1024, 1.0f);
  file[700] = std::numeric_limits<float>::quiet_NaN();
  Model m;
  if (!load(m, file)) std::printf("model rejected\n");
  cleanup(m);
  return 0;
}
