// A model is replicated on two GPUs. A health check after the first step finds
// device 1's replica diverged and drops it: it frees the replica's weights from the
// host thread, with device 0 current (cudaFree takes a pointer of any device), but
// leaves the pointer in the replica table. Shutdown, also on device 0, then releases
// every replica in the table: device 1's weights are freed a second time.
// Bug: double-free (host side) of a device-1 buffer, both frees with device 0 current.
// Needs 2 GPUs: with fewer it prints "skipped: needs 2 GPUs" and exits 77.
#include "../../examples/common.h"
#include <vector>

static void need_gpus(int want) {
  int n = 0;
  if (cudaGetDeviceCount(&n) != cudaSuccess) n = 0;
  if (n < want) {
    std::printf("skipped: needs %d GPUs, found %d\n", want, n);
    std::exit(77);
  }
}

struct Replica {
  int device;
  float *weights;
  int n;
};

__global__ void sgd_step(float *w, int n, float lr, int seed) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) w[i] -= lr * float((i * 13 + seed) % 7 - 3);
}

static void release(Replica &r) {
  cudaError_t e = cudaFree(r.weights); // cusafe-expect: double-free
  if (e != cudaSuccess) std::printf("release of device %d's replica: cudaFree returned %d\n", r.device, int(e));
}

int main() {
  need_gpus(2);
  const int n = 8192;
  std::vector<float> init(n, 1.0f);
  std::vector<Replica> table;
  for (int d = 0; d < 2; ++d) {
    CK(cudaSetDevice(d));
    Replica r{d, nullptr, n};
    CK(cudaMalloc(&r.weights, n * sizeof(float)));
    CK(cudaMemcpy(r.weights, init.data(), n * sizeof(float), cudaMemcpyHostToDevice));
    table.push_back(r);
  }
  std::vector<float> w0(n), w1(n);
  for (int d = 0; d < 2; ++d) {
    CK(cudaSetDevice(d));
    sgd_step<<<n / 256, 256>>>(table[d].weights, n, 0.01f, d); // replica 1 gets another seed
    CK(cudaGetLastError());
    CK(cudaDeviceSynchronize());
  }
  // Health check from the host thread, device 0 current.
  CK(cudaSetDevice(0));
  CK(cudaMemcpy(w0.data(), table[0].weights, n * sizeof(float), cudaMemcpyDefault));
  CK(cudaMemcpy(w1.data(), table[1].weights, n * sizeof(float), cudaMemcpyDefault));
  int diverged = 0;
  for (int i = 0; i < n; ++i) diverged += w0[i] != w1[i];
  std::printf("replica 1 differs in %d of %d weights\n", diverged, n);
  if (diverged) {
    std::printf("dropping replica 1\n");
    release(table[1]); // the entry stays in the table
  }
  // Shutdown: release every replica, device 0 still current.
  for (Replica &r : table) release(r);
  return 0;
}
