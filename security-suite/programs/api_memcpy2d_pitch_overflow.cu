// Crops a 64 x 64 tile out of an 80-pixel-wide host image into a dense device tile
// with cudaMemcpy2D. The destination pitch was given as the image's pitch instead of
// the tile's, so the copy's last rows land past the end of the tile buffer.
// Bug: api-out-of-bounds (cudaMemcpy2D destination).
#include "../../examples/common.h"
#include <vector>

__global__ void invert(float *tile, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) tile[i] = 1.0f - tile[i];
}

int main() {
  const int img_w = 80, img_h = 80, tw = 64, th = 64, x0 = 8, y0 = 8;
  std::vector<float> img(img_w * img_h);
  for (int i = 0; i < img_w * img_h; ++i) img[i] = float(i % 2);
  float *tile, *after;
  CK(cudaMalloc(&tile, tw * th * sizeof(float)));
  CK(cudaMalloc(&after, tw * th * sizeof(float)));
  const float *src = img.data() + y0 * img_w + x0;
  cudaError_t e = cudaMemcpy2D(tile, img_w * sizeof(float), src, img_w * sizeof(float), tw * sizeof(float), th, cudaMemcpyHostToDevice); // cusafe-expect: api-out-of-bounds
  std::printf("crop returned %d\n", int(e));
  invert<<<tw * th / 256, 256>>>(tile, tw * th);
  std::vector<float> t(tw * th);
  CK(cudaMemcpy(t.data(), tile, t.size() * sizeof(float), cudaMemcpyDeviceToHost));
  std::printf("tile[0]=%.0f tile[1]=%.0f\n", t[0], t[1]);
  CK(cudaFree(tile));
  CK(cudaFree(after));
  return 0;
}
