// Scales a signal on the GPU. The input is built in a host array (new[], pageable) and
// uploaded to d_in, but the launch passes the host array instead of d_in: every thread
// reads the host heap address, which is in no device allocation. Bug: wild-access, READ
// (host pointer passed to a kernel). Without HMM the plain build stops the launch with
// an illegal-address error (the program prints a line before it); where the driver
// maps pageable host memory for the GPU (HMM) the read may succeed.
#include "../../examples/common.h"

__global__ void scale(const float *in, float *out, float gain, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = gain * in[i]; // cusafe-expect: wild-access
}

int main() {
  const int n = 4096;
  float *h_in = new float[n];
  float *h_out = new float[n];
  for (int i = 0; i < n; ++i) h_in[i] = float(i % 100) * 0.01f;
  float *d_in, *d_out;
  CK(cudaMalloc(&d_in, n * sizeof(float)));
  CK(cudaMalloc(&d_out, n * sizeof(float)));
  CK(cudaMemcpy(d_in, h_in, n * sizeof(float), cudaMemcpyHostToDevice));
  std::printf("scaling %d samples\n", n);
  scale<<<n / 256, 256>>>(h_in, d_out, 2.0f, n); // meant d_in
  cudaError_t err = cudaDeviceSynchronize();
  std::printf("scale: %s\n", cudaGetErrorString(err));
  if (err == cudaSuccess) {
    CK(cudaMemcpy(h_out, d_out, n * sizeof(float), cudaMemcpyDeviceToHost));
    double sum = 0;
    for (int i = 0; i < n; ++i) sum += h_out[i];
    std::printf("checksum %.2f\n", sum);
    CK(cudaFree(d_in));
    CK(cudaFree(d_out));
  }
  delete[] h_in;
  delete[] h_out;
  return 0;
}
