// Fuzz target: binary PPM (P6) reader, then a 3x3 box blur of the luminance and a
// threshold on the GPU (16x16 thread blocks, an 18x18 shared tile with a clamped halo).
//
// Input: "P6" <ws> width <ws> height <ws> maxval <one ws byte> samples, with '#'
// comments in the header. maxval > 255 means 16-bit big-endian samples. Bytes after
// the first image (a second frame, say) are ignored.
//
// Planted bugs (-DCUSAFE_FIXED builds the fixed variant):
//  1. device, heap-buffer-overflow (WRITE): the mask store checks x < w but not y < h,
//     so when the height is not a multiple of 16 the last row of blocks writes up to 15
//     rows past the mask. The seeds' heights are 16, 32 and 48.
//  2. host, heap-buffer-overflow (WRITE): 16-bit samples are copied whole into a buffer
//     sized for 8-bit samples. The seeds have maxval <= 255; one carries a second frame,
//     so raising its maxval past 255 is enough.
#include <cusafe/fuzz.h>
#include <cuda_runtime.h>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <vector>

#include "../common/cuda_check.h"

constexpr int B = 16;                            // thread block is B x B pixels
constexpr unsigned kMaxSide = 4096;
constexpr size_t kMaxPixels = size_t(1) << 22;  // 12 MiB of RGB + 4 MiB of mask on the device

__global__ void blur_threshold(const uint8_t *rgb, uint8_t *mask, int w, int h, float thr) {
  __shared__ float tile[B + 2][B + 2];
  const int x0 = blockIdx.x * B, y0 = blockIdx.y * B;
  for (int i = threadIdx.y * B + threadIdx.x; i < (B + 2) * (B + 2); i += B * B) {
    const int tx = i % (B + 2), ty = i / (B + 2);
    const int gx = min(max(x0 + tx - 1, 0), w - 1);
    const int gy = min(max(y0 + ty - 1, 0), h - 1);
    const uint8_t *px = rgb + 3 * (size_t(gy) * w + gx);
    tile[ty][tx] = (77 * px[0] + 150 * px[1] + 29 * px[2]) * (1.0f / 256);
  }
  __syncthreads();
  float s = 0;
  for (int dy = 0; dy < 3; ++dy)
    for (int dx = 0; dx < 3; ++dx) s += tile[threadIdx.y + dy][threadIdx.x + dx];
  const int x = x0 + threadIdx.x, y = y0 + threadIdx.y;
#ifdef CUSAFE_FIXED
  if (x < w && y < h)
#else
  if (x < w)
#endif
    mask[size_t(y) * w + x] = s * (1.0f / 9) > thr ? 255 : 0; // cusafe-expect: heap-buffer-overflow
}

static bool is_space(uint8_t c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

// Skips white space and '#' comments, then reads a decimal number of at most 6 digits.
static bool read_uint(const uint8_t *&p, const uint8_t *end, unsigned &v) {
  for (;;) {
    while (p < end && is_space(*p)) ++p;
    if (p == end || *p != '#') break;
    while (p < end && *p != '\n') ++p;
  }
  if (p == end || *p < '0' || *p > '9') return false;
  v = 0;
  for (int digits = 0; p < end && *p >= '0' && *p <= '9'; ++p) {
    if (++digits > 6) return false;
    v = v * 10 + (*p - '0');
  }
  return true;
}

CUSAFE_FUZZ_TARGET(data, size) {
  const uint8_t *p = data, *end = data + size;
  if (size < 2 || p[0] != 'P' || p[1] != '6') return 0;
  p += 2;
  unsigned w, h, maxval;
  if (!read_uint(p, end, w) || !read_uint(p, end, h) || !read_uint(p, end, maxval)) return 0;
  if (p == end || !is_space(*p)) return 0;  // exactly one white-space byte ends the header
  ++p;
  if (w == 0 || h == 0 || w > kMaxSide || h > kMaxSide || maxval == 0 || maxval > 65535)
    return 0;
  const size_t npix = size_t(w) * h;
  if (npix > kMaxPixels) return 0;
  const size_t bps = maxval > 255 ? 2 : 1;  // bytes per sample
  const size_t need = npix * 3 * bps;
  if (size_t(end - p) < need) return 0;

  // Samples, reduced to 8 bits in place (the high byte of a 16-bit sample).
#ifdef CUSAFE_FIXED
  std::vector<uint8_t> rgb(need);
#else
  std::vector<uint8_t> rgb(npix * 3);  // sized for 8-bit samples
#endif
  std::memcpy(rgb.data(), p, need); // asan-expect: heap-buffer-overflow
  if (bps == 2)
    for (size_t i = 0; i < npix * 3; ++i) rgb[i] = rgb[2 * i];
  const unsigned top = bps == 2 ? maxval >> 8 : maxval;  // the largest 8-bit value

  Dev<uint8_t> drgb, dmask;
  if (!drgb.alloc(npix * 3) || !dmask.alloc(npix)) return 0;
  if (!CK(cudaMemcpy(drgb.p, rgb.data(), npix * 3, cudaMemcpyHostToDevice))) return 0;
  const dim3 block(B, B), grid((w + B - 1) / B, (h + B - 1) / B);
  blur_threshold<<<grid, block>>>(drgb.p, dmask.p, int(w), int(h), 0.5f * top);
  if (!CK(cudaGetLastError()) || !CK(cudaDeviceSynchronize())) return 0;
  std::vector<uint8_t> mask(npix);
  if (!CK(cudaMemcpy(mask.data(), dmask.p, npix, cudaMemcpyDeviceToHost))) return 0;

  size_t lit = 0, edges = 0;
  for (size_t y = 0; y < h; ++y)
    for (size_t x = 0; x < w; ++x) {
      const uint8_t m = mask[y * w + x];
      lit += m != 0;
      edges += x + 1 < w && m != mask[y * w + x + 1];
    }
  std::printf("ppm_filter: %ux%u maxval %u: %zu of %zu pixels above the threshold, %zu edges\n",
              w, h, maxval, lit, npix, edges);
  return 0;
}
