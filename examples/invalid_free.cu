// A sub-buffer view (pointer into the middle of an allocation) is freed as if it
// were an allocation. Bug: invalid-free (interior pointer).
#include "common.h"

int main() {
  const int rows = 64, cols = 64;
  float *matrix;
  CK(cudaMalloc(&matrix, rows * cols * sizeof(float)));
  float *row32 = matrix + 32 * cols;
  cudaError_t e = cudaFree(row32); // cusafe-expect: invalid-free
  std::printf("cudaFree(interior) returned %d\n", int(e));
  CK(cudaFree(matrix));
  return 0;
}
