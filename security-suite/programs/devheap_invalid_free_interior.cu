// Each block's first thread assembles a message in one device-heap block: a 16-byte
// header (count, kind) followed by the float payload. It hands the payload view to a
// consumer written for plain payload buffers, which sums the payload and frees the
// pointer it was given: 16 bytes into the block. Bug: invalid-free (device heap,
// interior pointer). The plain build's device heap may fault or be corrupted; the
// program prints a line before the launch.
#include "../../examples/common.h"
#include <vector>

struct Header {
  int count;
  int kind;
  int reserved[2];
};

__device__ __noinline__ float consume(float *payload, int n) {
  float s = 0;
  for (int i = 0; i < n; ++i) s += payload[i];
  free(payload); // cusafe-expect: invalid-free
  return s;
}

__global__ void messages(const float *src, int n, float *sums) {
  if (threadIdx.x != 0) return;
  char *msg = static_cast<char *>(malloc(sizeof(Header) + n * sizeof(float)));
  if (!msg) {
    sums[blockIdx.x] = -1;
    return;
  }
  Header *h = reinterpret_cast<Header *>(msg);
  h->count = n;
  h->kind = 1;
  float *payload = reinterpret_cast<float *>(msg + sizeof(Header));
  for (int i = 0; i < n; ++i) payload[i] = src[blockIdx.x * n + i];
  sums[blockIdx.x] = consume(payload, h->count);
}

int main() {
  const int blocks = 4, n = 100;
  std::vector<float> h(blocks * n);
  for (size_t i = 0; i < h.size(); ++i) h[i] = float(i % 10);
  float *src, *sums;
  CK(cudaMalloc(&src, h.size() * sizeof(float)));
  CK(cudaMalloc(&sums, blocks * sizeof(float)));
  CK(cudaMemcpy(src, h.data(), h.size() * sizeof(float), cudaMemcpyHostToDevice));
  std::printf("sending %d messages of %d floats\n", blocks, n);
  messages<<<blocks, 32>>>(src, n, sums);
  cudaError_t err = cudaDeviceSynchronize();
  std::printf("messages: %s\n", cudaGetErrorString(err));
  if (err != cudaSuccess) return 0; // the context is lost after a fault
  float s[blocks];
  CK(cudaMemcpy(s, sums, sizeof s, cudaMemcpyDeviceToHost));
  std::printf("sums %.0f %.0f %.0f %.0f\n", s[0], s[1], s[2], s[3]);
  CK(cudaFree(src));
  CK(cudaFree(sums));
  return 0;
}
