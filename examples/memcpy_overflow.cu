// Copy-back of a result sized by the input length instead of the output length:
// cudaMemcpy reads past the end of the device buffer. Bug: api-out-of-bounds.
#include "common.h"
#include <vector>

int main() {
  const int n_in = 1000, n_out = 500;
  float *d_out;
  CK(cudaMalloc(&d_out, n_out * sizeof(float)));
  CK(cudaMemset(d_out, 0, n_out * sizeof(float)));
  std::vector<float> h(n_in);
  cudaError_t e = cudaMemcpy(h.data(), d_out, n_in * sizeof(float), cudaMemcpyDeviceToHost); // cusafe-expect: api-out-of-bounds
  std::printf("cudaMemcpy returned %d\n", int(e));
  CK(cudaFree(d_out));
  return 0;
}
