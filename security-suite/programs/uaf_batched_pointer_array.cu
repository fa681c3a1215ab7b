// Batched GEMV y_b = A_b x over an array of matrix pointers kept in device memory.
// One matrix is evicted and re-created; the host's pointer array is updated but the
// device copy of it is not, so the kernel reaches the freed matrix through a pointer
// loaded from device memory. Bug: use-after-free, READ (through a copied pointer).
#include "../../examples/common.h"
#include <vector>

__global__ void gemv_batched(const float *const *A, const float *x, float *y, int rows, int cols) {
  int b = blockIdx.y, r = blockIdx.x * blockDim.x + threadIdx.x;
  if (r >= rows) return;
  const float *a = A[b];
  float acc = 0;
  for (int c = 0; c < cols; ++c) acc += a[r * cols + c] * x[c]; // cusafe-expect: use-after-free
  y[b * rows + r] = acc;
}

int main() {
  const int batch = 8, rows = 128, cols = 64;
  std::vector<float *> A(batch);
  std::vector<float> h(rows * cols);
  for (int b = 0; b < batch; ++b) {
    for (int i = 0; i < rows * cols; ++i) h[i] = float((i + b) % 4);
    CK(cudaMalloc(&A[b], rows * cols * sizeof(float)));
    CK(cudaMemcpy(A[b], h.data(), rows * cols * sizeof(float), cudaMemcpyHostToDevice));
  }
  float **dA, *x, *y;
  CK(cudaMalloc(&dA, batch * sizeof(float *)));
  CK(cudaMemcpy(dA, A.data(), batch * sizeof(float *), cudaMemcpyHostToDevice));
  CK(cudaMalloc(&x, cols * sizeof(float)));
  CK(cudaMalloc(&y, batch * rows * sizeof(float)));
  std::vector<float> hx(cols, 1.0f);
  CK(cudaMemcpy(x, hx.data(), cols * sizeof(float), cudaMemcpyHostToDevice));
  // Evict and re-create matrix 5; the device-side pointer array is not re-uploaded.
  CK(cudaFree(A[5]));
  CK(cudaMalloc(&A[5], rows * cols * sizeof(float)));
  CK(cudaMemset(A[5], 0, rows * cols * sizeof(float)));
  gemv_batched<<<dim3(rows / 64, batch), 64>>>(dA, x, y, rows, cols);
  CK(cudaDeviceSynchronize());
  std::vector<float> hy(batch * rows);
  CK(cudaMemcpy(hy.data(), y, hy.size() * sizeof(float), cudaMemcpyDeviceToHost));
  std::printf("y[0]=%.0f y[%d]=%.0f\n", hy[0], rows, hy[rows]);
  for (float *a : A) CK(cudaFree(a));
  CK(cudaFree(dA));
  CK(cudaFree(x));
  CK(cudaFree(y));
  return 0;
}
