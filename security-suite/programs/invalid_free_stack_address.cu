// A small-buffer optimisation keeps short vectors on the host stack instead of on
// the device; the release path forgets the distinction and hands the stack address
// to cudaFree. Bug: invalid-free (never allocated by cudaMalloc: a host stack address).
#include "../../examples/common.h"

struct SmallVec {
  float inline_data[16];
  float *data;
  int n;
  bool on_device;
};

static void init(SmallVec &v, int n) {
  v.n = n;
  v.on_device = n > 16;
  if (v.on_device) {
    CK(cudaMalloc(&v.data, n * sizeof(float)));
    CK(cudaMemset(v.data, 0, n * sizeof(float)));
  } else {
    v.data = v.inline_data;
    for (int i = 0; i < n; ++i) v.inline_data[i] = 0.0f;
  }
}

static void release(SmallVec &v) {
  cudaError_t e = cudaFree(v.data); // cusafe-expect: invalid-free
  if (e != cudaSuccess) std::printf("release(%d elements) returned %d\n", v.n, int(e));
}

int main() {
  SmallVec big, small;
  init(big, 1000);
  init(small, 8);
  std::printf("big on device: %d, small on device: %d\n", big.on_device, small.on_device);
  release(big);
  release(small);
  return 0;
}
