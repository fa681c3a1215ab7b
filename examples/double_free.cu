// Two owners of one buffer both release it. Bug: double-free (host side).
#include "common.h"

struct Tensor {
  float *data;
  int n;
};

static void release(Tensor &t) {
  cudaFree(t.data); // cusafe-expect: double-free
}

int main() {
  Tensor a{nullptr, 256};
  CK(cudaMalloc(&a.data, a.n * sizeof(float)));
  Tensor view = a; // shallow copy: both think they own the data
  release(a);
  release(view);
  std::printf("released twice\n");
  return 0;
}
