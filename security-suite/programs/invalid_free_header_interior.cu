// A message buffer is laid out as a 64-byte header followed by the payload, in one
// allocation. The consumer only sees the payload view and frees it as if it were the
// allocation. Bug: invalid-free (interior pointer).
#include "../../examples/common.h"

struct Header {
  int count;
  int kind;
  char tag[56];
};

__global__ void fill(float *payload, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) payload[i] = float(i);
}

static void consume(float *payload, int n) {
  float last = 0;
  CK(cudaMemcpy(&last, payload + n - 1, sizeof last, cudaMemcpyDeviceToHost));
  std::printf("last payload value %.0f\n", last);
  cudaError_t e = cudaFree(payload); // cusafe-expect: invalid-free
  std::printf("cudaFree(payload) returned %d\n", int(e));
}

int main() {
  const int n = 1000;
  char *msg;
  CK(cudaMalloc(&msg, sizeof(Header) + n * sizeof(float)));
  float *payload = reinterpret_cast<float *>(msg + sizeof(Header));
  fill<<<(n + 255) / 256, 256>>>(payload, n);
  consume(payload, n);
  CK(cudaFree(msg));
  return 0;
}
