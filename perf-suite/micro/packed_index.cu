// The packed block index on the device (docs/formats.md, "Packed blocks"): the pass's
// root half finds a packed block's index in its slab as
//   k = cvt.rzi.u32(div.approx.f32(cvt.rn.f32(x) - 0.5, cvt.rn.f32(f + 1)))
// for x = 0 .. 2^14 (whole steps from the slab to the tile, plus one) and f = 0 .. 254.
// This program runs that exact instruction sequence (inline PTX) for every pair on the
// GPU and compares it with the integer answer, (x - 1) / (f + 1) (0 for x = 0).
// Prints "packed_index pairs=N wrong=W" and exits 1 when W > 0.
#include <cuda_runtime_api.h>

#include <cstdio>

constexpr unsigned kSteps = (1u << 14) + 1;
constexpr unsigned kFields = 255;

__global__ void check_all(unsigned long long *wrong, unsigned *first_bad) {
  unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= kSteps * kFields) return;
  unsigned x = i % kSteps, units = i / kSteps + 1;
  unsigned k;
  asm("{\n\t.reg .f32 xf, uf, q;\n\t"
      "cvt.rn.f32.u32 xf, %1;\n\t"
      "add.rn.f32 xf, xf, 0fBF000000;\n\t"
      "cvt.rn.f32.u32 uf, %2;\n\t"
      "div.approx.f32 q, xf, uf;\n\t"
      "cvt.rzi.u32.f32 %0, q;\n\t}"
      : "=r"(k)
      : "r"(x), "r"(units));
  unsigned want = x == 0 ? 0 : (x - 1) / units;
  if (k != want) {
    atomicAdd(wrong, 1ull);
    atomicMin(first_bad, i);
  }
}

int main() {
  unsigned long long *wrong;
  unsigned *first_bad;
  if (cudaMalloc(&wrong, sizeof *wrong) != cudaSuccess || cudaMalloc(&first_bad, sizeof *first_bad) != cudaSuccess) {
    std::fprintf(stderr, "packed_index: cudaMalloc failed; is a GPU visible (nvidia-smi)?\n");
    return 2;
  }
  cudaMemset(wrong, 0, sizeof *wrong);
  cudaMemset(first_bad, 0xff, sizeof *first_bad);
  unsigned n = kSteps * kFields;
  check_all<<<(n + 255) / 256, 256>>>(wrong, first_bad);
  unsigned long long w = 0;
  unsigned bad = 0;
  if (cudaMemcpy(&w, wrong, sizeof w, cudaMemcpyDeviceToHost) != cudaSuccess ||
      cudaMemcpy(&bad, first_bad, sizeof bad, cudaMemcpyDeviceToHost) != cudaSuccess) {
    std::fprintf(stderr, "packed_index: the kernel failed: %s\n", cudaGetErrorString(cudaGetLastError()));
    return 2;
  }
  std::printf("packed_index pairs=%u wrong=%llu", n, w);
  if (w) std::printf(" first x=%u units=%u", bad % kSteps, bad / kSteps + 1);
  std::printf("\n");
  return w ? 1 : 0;
}
