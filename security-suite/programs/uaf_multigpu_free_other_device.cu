// A two-GPU pipeline keeps each stage's scratch buffer in a table of per-device
// workspaces. When the last micro-batch has been queued, the host thread (device 0
// current) releases every workspace — cudaFree takes a pointer of any device — but
// device 1's stage still has the tail micro-batch to run, and it normalises that
// batch with the scratch buffer it was handed at set-up.
// Bug: use-after-free, READ, in a kernel on device 1 of a device-1 buffer freed while
// device 0 was current.
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

struct Workspace {
  int device;
  float *scratch; // per-row scale factors of the stage
};

__global__ void scales(const float *x, float *scratch, int rows, int cols) {
  int r = blockIdx.x * blockDim.x + threadIdx.x;
  if (r >= rows) return;
  float m = 0.0f;
  for (int c = 0; c < cols; ++c) m = fmaxf(m, fabsf(x[r * cols + c]));
  scratch[r] = m > 0.0f ? 1.0f / m : 1.0f;
}

__global__ void normalise(const float *x, const float *scratch, float *y, int rows, int cols) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= rows * cols) return;
  y[i] = x[i] * scratch[i / cols]; // cusafe-expect: use-after-free
}

int main() {
  need_gpus(2);
  const int rows = 512, cols = 64, n = rows * cols;
  std::vector<float> hx(n), hy(n);
  for (int i = 0; i < n; ++i) hx[i] = float((i * 29) % 41 - 20);
  Workspace ws[2];
  float *x[2], *y[2];
  for (int d = 0; d < 2; ++d) {
    CK(cudaSetDevice(d));
    ws[d].device = d;
    CK(cudaMalloc(&ws[d].scratch, rows * sizeof(float)));
    CK(cudaMalloc(&x[d], n * sizeof(float)));
    CK(cudaMalloc(&y[d], n * sizeof(float)));
    CK(cudaMemcpy(x[d], hx.data(), n * sizeof(float), cudaMemcpyHostToDevice));
  }
  double total = 0;
  const int batches = 3;
  for (int b = 0; b < batches; ++b) {
    int d = b % 2;
    CK(cudaSetDevice(d));
    scales<<<rows / 128, 128>>>(x[d], ws[d].scratch, rows, cols);
    normalise<<<n / 256, 256>>>(x[d], ws[d].scratch, y[d], rows, cols);
    CK(cudaMemcpy(hy.data(), y[d], n * sizeof(float), cudaMemcpyDeviceToHost));
    for (float v : hy) total += v;
  }
  // "All micro-batches queued": release the workspaces from the host thread.
  CK(cudaSetDevice(0));
  for (Workspace &w : ws) CK(cudaFree(w.scratch));
  // ...but device 1 still runs the tail micro-batch with its old workspace.
  CK(cudaSetDevice(1));
  normalise<<<n / 256, 256>>>(x[1], ws[1].scratch, y[1], rows, cols);
  CK(cudaGetLastError());
  CK(cudaDeviceSynchronize());
  std::printf("normalised %d batches, sum %.3f\n", batches, total);
  for (int d = 0; d < 2; ++d) {
    CK(cudaSetDevice(d));
    CK(cudaFree(x[d]));
    CK(cudaFree(y[d]));
  }
  return 0;
}
