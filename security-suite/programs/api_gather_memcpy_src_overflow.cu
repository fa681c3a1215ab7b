// Gathers ragged device arrays into a padded batch (one row of max_len per part)
// with device-to-device copies. Each copy moves max_len elements whatever the part's
// real length, so the first shorter part is read past its end.
// Bug: api-out-of-bounds (cudaMemcpy source).
#include "../../examples/common.h"
#include <vector>

int main() {
  const int parts = 4, max_len = 512;
  const int lens[parts] = {512, 300, 512, 64};
  float *part[parts], *batch;
  for (int k = 0; k < parts; ++k) {
    CK(cudaMalloc(&part[k], lens[k] * sizeof(float)));
    std::vector<float> h(lens[k], float(k + 1));
    CK(cudaMemcpy(part[k], h.data(), lens[k] * sizeof(float), cudaMemcpyHostToDevice));
  }
  CK(cudaMalloc(&batch, parts * max_len * sizeof(float)));
  CK(cudaMemset(batch, 0, parts * max_len * sizeof(float)));
  for (int k = 0; k < parts; ++k) {
    cudaError_t e = cudaMemcpy(batch + k * max_len, part[k], max_len * sizeof(float), cudaMemcpyDeviceToDevice); // cusafe-expect: api-out-of-bounds
    if (e != cudaSuccess) std::printf("copy %d returned %d\n", k, int(e));
  }
  std::vector<float> b(parts * max_len);
  CK(cudaMemcpy(b.data(), batch, b.size() * sizeof(float), cudaMemcpyDeviceToHost));
  std::printf("batch: row 0 starts %.0f, row 2 starts %.0f\n", b[0], b[2 * max_len]);
  for (int k = 0; k < parts; ++k) CK(cudaFree(part[k]));
  CK(cudaFree(batch));
  return 0;
}
