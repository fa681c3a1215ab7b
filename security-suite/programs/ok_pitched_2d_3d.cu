// Correct: pitched allocations. A 2-D image from cudaMallocPitch, uploaded and
// downloaded with cudaMemcpy2D, blurred horizontally by a kernel that steps rows by
// the pitch in bytes; a 3-D volume from cudaMalloc3D, filled with cudaMemcpy3D and
// cudaMemset3D, reduced along z by a kernel that indexes slices by pitch * ysize.
#include "../../examples/common.h"
#include <vector>

__global__ void blur_rows(const float *in, size_t ipitch, float *out, size_t opitch, int w, int h) {
  int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y;
  if (x >= w || y >= h) return;
  const float *r = reinterpret_cast<const float *>(reinterpret_cast<const char *>(in) + y * ipitch);
  float *o = reinterpret_cast<float *>(reinterpret_cast<char *>(out) + y * opitch);
  o[x] = (r[max(x - 1, 0)] + r[x] + r[min(x + 1, w - 1)]) / 3.0f;
}

__global__ void sum_z(cudaPitchedPtr vol, int w, int h, int d, float *plane) {
  int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y;
  if (x >= w || y >= h) return;
  const char *base = static_cast<const char *>(vol.ptr);
  float s = 0;
  for (int z = 0; z < d; ++z)
    s += reinterpret_cast<const float *>(base + (z * vol.ysize + y) * vol.pitch)[x];
  plane[y * w + x] = s;
}

int main() {
  const int w = 1000, h = 300;
  std::vector<float> img(w * h);
  for (int i = 0; i < w * h; ++i) img[i] = float(i % 6);
  float *a, *b;
  size_t pa, pb;
  CK(cudaMallocPitch(&a, &pa, w * sizeof(float), h));
  CK(cudaMallocPitch(&b, &pb, w * sizeof(float), h));
  CK(cudaMemcpy2D(a, pa, img.data(), w * sizeof(float), w * sizeof(float), h, cudaMemcpyHostToDevice));
  CK(cudaMemset2D(b, pb, 0, w * sizeof(float), h));
  blur_rows<<<dim3((w + 127) / 128, h), 128>>>(a, pa, b, pb, w, h);
  CK(cudaMemcpy2D(img.data(), w * sizeof(float), b, pb, w * sizeof(float), h, cudaMemcpyDeviceToHost));
  double s2 = 0;
  for (float v : img) s2 += v;
  std::printf("2-D: pitch >= row: %d, blurred sum %.2f\n", pa >= w * sizeof(float), s2);
  CK(cudaFree(a));
  CK(cudaFree(b));

  const int vw = 100, vh = 50, vd = 20;
  cudaExtent ext = make_cudaExtent(vw * sizeof(float), vh, vd);
  cudaPitchedPtr vol;
  CK(cudaMalloc3D(&vol, ext));
  CK(cudaMemset3D(vol, 0, ext));
  std::vector<float> hv(vw * vh * vd);
  for (size_t i = 0; i < hv.size(); ++i) hv[i] = float(i % 4);
  cudaMemcpy3DParms p = {};
  p.srcPtr = make_cudaPitchedPtr(hv.data(), vw * sizeof(float), vw, vh);
  p.dstPtr = vol;
  p.extent = ext;
  p.kind = cudaMemcpyHostToDevice;
  CK(cudaMemcpy3D(&p));
  float *plane;
  CK(cudaMalloc(&plane, vw * vh * sizeof(float)));
  sum_z<<<dim3(1, vh), 128>>>(vol, vw, vh, vd, plane);
  std::vector<float> hp(vw * vh);
  CK(cudaMemcpy(hp.data(), plane, hp.size() * sizeof(float), cudaMemcpyDeviceToHost));
  double s3 = 0;
  for (float v : hp) s3 += v;
  std::printf("3-D: z-sum total %.0f\n", s3);
  CK(cudaFree(vol.ptr));
  CK(cudaFree(plane));
  return 0;
}
