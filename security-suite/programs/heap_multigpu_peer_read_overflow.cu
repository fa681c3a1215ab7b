// A 1-D heat equation split over two GPUs: device 0 owns the left half of the rod,
// device 1 the right half. Device 1's kernel reads its left halo straight from
// device 0's buffer through peer access (cudaDeviceEnablePeerAccess) instead of
// exchanging halos, and takes the neighbour's length as its last index: thread 0 of
// device 1 reads left[n_left], one float past the end of device 0's buffer.
// Bug: heap-buffer-overflow, READ, in a kernel on device 1 of a device-0 buffer.
// Needs 2 GPUs with peer access: otherwise it prints "skipped: ..." and exits 77.
#include "../../examples/common.h"
#include <utility>
#include <vector>

static void need_gpus(int want) {
  int n = 0;
  if (cudaGetDeviceCount(&n) != cudaSuccess) n = 0;
  if (n < want) {
    std::printf("skipped: needs %d GPUs, found %d\n", want, n);
    std::exit(77);
  }
}

// Device 0's half: the right neighbour of its last cell is device 1's first cell.
__global__ void step_left(const float *mine, const float *right, float *out, int n, float k) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  float l = i > 0 ? mine[i - 1] : mine[i];
  float r = i < n - 1 ? mine[i + 1] : right[0];
  out[i] = mine[i] + k * (l - 2.0f * mine[i] + r);
}

// Device 1's half: the left neighbour of its first cell is device 0's last cell.
__global__ void step_right(const float *mine, const float *left, int n_left, float *out, int n,
                           float k) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  float l = i > 0 ? mine[i - 1] : left[n_left]; // cusafe-expect: heap-buffer-overflow
  float r = i < n - 1 ? mine[i + 1] : mine[i];
  out[i] = mine[i] + k * (l - 2.0f * mine[i] + r);
}

int main() {
  need_gpus(2);
  int ok01 = 0, ok10 = 0;
  CK(cudaDeviceCanAccessPeer(&ok01, 0, 1));
  CK(cudaDeviceCanAccessPeer(&ok10, 1, 0));
  if (!ok01 || !ok10) {
    std::printf("skipped: devices 0 and 1 cannot access each other's memory (no peer access)\n");
    return 77;
  }
  const int n0 = 1000, n1 = 1000; // 4000 bytes each: the read lands in the rounding
  std::vector<float> h0(n0), h1(n1);
  for (int i = 0; i < n0; ++i) h0[i] = i == n0 / 2 ? 1000.0f : 0.0f;
  for (int i = 0; i < n1; ++i) h1[i] = i == n1 / 4 ? 500.0f : 0.0f;
  float *a0, *b0, *a1, *b1;
  CK(cudaSetDevice(0));
  CK(cudaDeviceEnablePeerAccess(1, 0));
  CK(cudaMalloc(&a0, n0 * sizeof(float)));
  CK(cudaMalloc(&b0, n0 * sizeof(float)));
  CK(cudaMemcpy(a0, h0.data(), n0 * sizeof(float), cudaMemcpyHostToDevice));
  CK(cudaSetDevice(1));
  CK(cudaDeviceEnablePeerAccess(0, 0));
  CK(cudaMalloc(&a1, n1 * sizeof(float)));
  CK(cudaMalloc(&b1, n1 * sizeof(float)));
  CK(cudaMemcpy(a1, h1.data(), n1 * sizeof(float), cudaMemcpyHostToDevice));
  for (int s = 0; s < 4; ++s) {
    CK(cudaSetDevice(0));
    step_left<<<(n0 + 255) / 256, 256>>>(a0, a1, b0, n0, 0.25f);
    CK(cudaGetLastError());
    CK(cudaSetDevice(1));
    step_right<<<(n1 + 255) / 256, 256>>>(a1, a0, n0, b1, n1, 0.25f);
    CK(cudaGetLastError());
    CK(cudaDeviceSynchronize());
    CK(cudaSetDevice(0));
    CK(cudaDeviceSynchronize());
    std::swap(a0, b0);
    std::swap(a1, b1);
  }
  CK(cudaMemcpy(h0.data(), a0, n0 * sizeof(float), cudaMemcpyDeviceToHost));
  CK(cudaSetDevice(1));
  CK(cudaMemcpy(h1.data(), a1, n1 * sizeof(float), cudaMemcpyDeviceToHost));
  // Leave out the cells the bad halo reaches (device 1's first few).
  double s0 = 0, s1 = 0;
  for (int i = 0; i < n0 - 8; ++i) s0 += h0[i];
  for (int i = 8; i < n1; ++i) s1 += h1[i];
  std::printf("heat after 4 steps: left %.3f, right %.3f\n", s0, s1);
  CK(cudaFree(a1));
  CK(cudaFree(b1));
  CK(cudaSetDevice(0));
  CK(cudaFree(a0));
  CK(cudaFree(b0));
  return 0;
}
