// Pipeline-parallel inference over two GPUs: layer 1 runs on device 0, its
// activations go to device 1 with cudaMemcpyPeer, and layer 2 runs there. Layer 2
// hands its result to the host as a length-prefixed record (rec[0] = count,
// rec[1 + i] = value), but the record was cudaMalloc'ed on device 1 for the values
// only: thread n - 1 (block 3, thread 231) writes rec[n], one float past the end.
// Bug: heap-buffer-overflow, WRITE, in a kernel on device 1 (a device-1 buffer).
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

// y[r] = relu(sum_c w[r * cols + c] * x[c] + b[r])
__global__ void dense_relu(const float *w, const float *x, const float *b, float *y,
                           int rows, int cols) {
  int r = blockIdx.x * blockDim.x + threadIdx.x;
  if (r >= rows) return;
  float acc = b[r];
  for (int c = 0; c < cols; ++c) acc += w[r * cols + c] * x[c];
  y[r] = acc > 0.0f ? acc : 0.0f;
}

__global__ void to_record(const float *y, float *rec, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i == 0) rec[0] = float(n);
  if (i < n) rec[1 + i] = y[i]; // cusafe-expect: heap-buffer-overflow
}

int main() {
  need_gpus(2);
  const int in = 64, hid = 256, n = 1000; // rec: 1000 floats, 1001 written
  std::vector<float> hx(in), hw1(hid * in), hb1(hid), hw2(n * hid), hb2(n);
  for (int i = 0; i < in; ++i) hx[i] = float(i % 7) * 0.25f;
  for (int i = 0; i < hid * in; ++i) hw1[i] = float((i * 37) % 17 - 8) / 64.0f;
  for (int i = 0; i < hid; ++i) hb1[i] = 0.125f;
  for (int i = 0; i < n * hid; ++i) hw2[i] = float((i * 11) % 13 - 6) / 128.0f;
  for (int i = 0; i < n; ++i) hb2[i] = float(i % 5) * 0.5f;

  // Stage 1 on device 0.
  float *x, *w1, *b1, *h0;
  CK(cudaSetDevice(0));
  CK(cudaMalloc(&x, in * sizeof(float)));
  CK(cudaMalloc(&w1, hid * in * sizeof(float)));
  CK(cudaMalloc(&b1, hid * sizeof(float)));
  CK(cudaMalloc(&h0, hid * sizeof(float)));
  CK(cudaMemcpy(x, hx.data(), in * sizeof(float), cudaMemcpyHostToDevice));
  CK(cudaMemcpy(w1, hw1.data(), hid * in * sizeof(float), cudaMemcpyHostToDevice));
  CK(cudaMemcpy(b1, hb1.data(), hid * sizeof(float), cudaMemcpyHostToDevice));
  dense_relu<<<hid / 128, 128>>>(w1, x, b1, h0, hid, in);
  CK(cudaGetLastError());
  CK(cudaDeviceSynchronize());

  // Stage 2 on device 1.
  float *h1, *w2, *b2, *y, *rec;
  CK(cudaSetDevice(1));
  CK(cudaMalloc(&h1, hid * sizeof(float)));
  CK(cudaMalloc(&w2, n * hid * sizeof(float)));
  CK(cudaMalloc(&b2, n * sizeof(float)));
  CK(cudaMalloc(&y, n * sizeof(float)));
  CK(cudaMalloc(&rec, n * sizeof(float))); // should be n + 1
  CK(cudaMemcpyPeer(h1, 1, h0, 0, hid * sizeof(float)));
  CK(cudaMemcpy(w2, hw2.data(), n * hid * sizeof(float), cudaMemcpyHostToDevice));
  CK(cudaMemcpy(b2, hb2.data(), n * sizeof(float), cudaMemcpyHostToDevice));
  dense_relu<<<(n + 255) / 256, 256>>>(w2, h1, b2, y, n, hid);
  to_record<<<(n + 255) / 256, 256>>>(y, rec, n);
  CK(cudaGetLastError());
  CK(cudaDeviceSynchronize());
  std::vector<float> hr(n);
  CK(cudaMemcpy(hr.data(), rec, n * sizeof(float), cudaMemcpyDeviceToHost));
  double sum = 0;
  for (int i = 1; i < n; ++i) sum += hr[i]; // the record as far as the host reads it
  std::printf("record of %.0f outputs, checksum %.4f\n", hr[0], sum);

  CK(cudaFree(h1));
  CK(cudaFree(w2));
  CK(cudaFree(b2));
  CK(cudaFree(y));
  CK(cudaFree(rec));
  CK(cudaSetDevice(0));
  CK(cudaFree(x));
  CK(cudaFree(w1));
  CK(cudaFree(b1));
  CK(cudaFree(h0));
  return 0;
}
