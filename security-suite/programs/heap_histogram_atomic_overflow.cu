// Intensity histogram of an 8-bit image into 64 bins with bin = v * bins / 255.
// The brightest value (255) maps to bin 64, one past the last bin, and the atomic
// increment lands after the histogram. Bug: heap-buffer-overflow, atomic WRITE.
#include "../../examples/common.h"
#include <vector>

__global__ void histogram(const unsigned char *img, int n, unsigned *hist, int bins) {
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
    int bin = img[i] * bins / 255;
    atomicAdd(&hist[bin], 1u); // cusafe-expect: heap-buffer-overflow
  }
}

int main() {
  const int w = 640, h = 480, n = w * h, bins = 64;
  std::vector<unsigned char> img(n);
  for (int i = 0; i < n; ++i) img[i] = (unsigned char)((i % w) * 255 / (w - 1)); // a ramp: 0..255
  unsigned char *dimg;
  unsigned *hist;
  CK(cudaMalloc(&dimg, n));
  CK(cudaMalloc(&hist, bins * sizeof(unsigned)));
  CK(cudaMemcpy(dimg, img.data(), n, cudaMemcpyHostToDevice));
  CK(cudaMemset(hist, 0, bins * sizeof(unsigned)));
  histogram<<<120, 256>>>(dimg, n, hist, bins);
  CK(cudaDeviceSynchronize());
  std::vector<unsigned> hh(bins);
  CK(cudaMemcpy(hh.data(), hist, bins * sizeof(unsigned), cudaMemcpyDeviceToHost));
  unsigned long long total = 0;
  for (unsigned c : hh) total += c;
  std::printf("hist[0]=%u hist[63]=%u counted %llu of %d pixels\n", hh[0], hh[63], total, n);
  CK(cudaFree(dimg));
  CK(cudaFree(hist));
  return 0;
}
