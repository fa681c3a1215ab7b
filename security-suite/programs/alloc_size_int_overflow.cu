// A panorama stitcher reads the image size from a PPM (P6) header and allocates one
// float accumulator per sample. The sample count is computed in int: 30000 x 30000 x 3
// = 2.7e9 overflows to -1594967296, which converts to a size_t near 2^64 in the
// cudaMalloc call. The call fails and its error is ignored; the accumulator stays null
// and the grid-stride clear kernel's bound is negative, so it touches nothing and the
// program goes on as if the buffer existed. Bug: allocation-size-too-big (host API).
#include "../../examples/common.h"

__global__ void clear(float *acc, int count) {
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < count; i += gridDim.x * blockDim.x)
    acc[i] = 0.0f;
}

int main() {
  const char *header = "P6\n30000 30000\n255\n";
  int width = 0, height = 0, maxval = 0;
  if (std::sscanf(header, "P6 %d %d %d", &width, &height, &maxval) != 3) return 1;
  const int channels = 3;
  int count = width * height * channels; // 2.7e9 does not fit in an int
  std::printf("panorama %dx%d, %d channels: %d samples\n", width, height, channels, count);
  float *acc = nullptr;
  cudaMalloc(&acc, count * sizeof(float)); // cusafe-expect: allocation-size-too-big
  clear<<<120, 256>>>(acc, count);
  cudaError_t err = cudaDeviceSynchronize();
  std::printf("accumulator cleared: %s\n", cudaGetErrorString(err));
  CK(cudaFree(acc)); // null: nothing to free
  return 0;
}
