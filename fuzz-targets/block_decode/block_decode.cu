// Fuzz target: a block-compressed 8-bit image. The host walks the blocks, decodes the
// literal ones into a plane of bs x bs tiles and builds an index of runs; the GPU expands
// the runs into their tiles, then turns the tile plane into a raster image.
//
// Input (little-endian):
//   "BLKZ", u16 width, u16 height, u8 block size bs (2..32), u8 version (1)
//   then one block per bs x bs tile, tiles in raster order (edge tiles are whole):
//     u8 type, u16 len, len payload bytes
//     type 0 literal: up to bs*bs delta-coded pixels (the rest of the tile is 0)
//     type 1 runs:    (count, value) byte pairs, filling the tile from its start
//     type 2 fill:    one value for the whole tile
//   Bytes after the last block are ignored.
//
// Planted bugs (-DCUSAFE_FIXED builds the fixed variant):
//  1. device, heap-buffer-overflow (WRITE): the run counts of a block are not checked
//     against the tile, so runs that add up to more than bs*bs in the last block write
//     past the plane. The seeds' run blocks add up to exactly bs*bs, and each seed ends
//     with one: raise one of its counts.
//  2. host, heap-buffer-overflow (WRITE): a literal block's len is trusted when its
//     payload is copied into the bs*bs scratch tile. The seeds' literal blocks are at
//     most bs*bs long and are followed by other blocks: raise one's len.
#include <cusafe/fuzz.h>
#include <cuda_runtime.h>
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <vector>

#include "../common/cuda_check.h"

constexpr unsigned kMaxSide = 4096;
constexpr size_t kMaxPixels = size_t(1) << 22;  // image <= 4 MiB, plane <= ~5 MiB
constexpr size_t kHeader = 10;

struct Run {
  unsigned at, count, value;  // plane offset of the run's first pixel
};

__global__ void expand_runs(const Run *runs, int nruns, uint8_t *plane) {
  const int r = blockIdx.x * blockDim.x + threadIdx.x;
  if (r >= nruns) return;
  const Run run = runs[r];
  for (unsigned k = 0; k < run.count; ++k)
    plane[run.at + k] = uint8_t(run.value); // cusafe-expect: heap-buffer-overflow
}

__global__ void untile(const uint8_t *plane, uint8_t *img, int w, int h, int bs, int nbx) {
  const int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x >= w || y >= h) return;
  const size_t b = size_t(y / bs) * nbx + x / bs;
  img[size_t(y) * w + x] = plane[b * bs * bs + (y % bs) * bs + x % bs];
}

static unsigned u16(const uint8_t *p) { return p[0] | unsigned(p[1]) << 8; }

CUSAFE_FUZZ_TARGET(data, size) {
  if (size < kHeader || std::memcmp(data, "BLKZ", 4) != 0 || data[9] != 1) return 0;
  const unsigned w = u16(data + 4), h = u16(data + 6), bs = data[8];
  if (w == 0 || h == 0 || w > kMaxSide || h > kMaxSide || bs < 2 || bs > 32) return 0;
  if (size_t(w) * h > kMaxPixels) return 0;
  const unsigned nbx = (w + bs - 1) / bs, nby = (h + bs - 1) / bs, tile = bs * bs;
  const size_t nblocks = size_t(nbx) * nby;
  if (nblocks > (size - kHeader) / 3) return 0;  // every block takes 3 bytes or more

  std::vector<uint8_t> plane(nblocks * tile, 0), scratch(tile);
  std::vector<Run> runs;
  const uint8_t *p = data + kHeader, *end = data + size;
  for (size_t b = 0; b < nblocks; ++b) {
    if (end - p < 3) return 0;
    const unsigned type = p[0], len = u16(p + 1);
    p += 3;
    if (size_t(end - p) < len) return 0;
    const unsigned at = unsigned(b * tile);
    if (type == 0) {  // literal, delta-coded: decoded in the scratch tile
      std::fill(scratch.begin(), scratch.end(), 0);
#ifdef CUSAFE_FIXED
      if (len > tile) return 0;
#endif
      std::memcpy(scratch.data(), p, len); // asan-expect: heap-buffer-overflow
      for (unsigned k = 1; k < len; ++k) scratch[k] = uint8_t(scratch[k] + scratch[k - 1]);
      std::memcpy(plane.data() + at, scratch.data(), tile);
    } else if (type == 1) {  // runs
      if (len % 2) return 0;
      unsigned start = 0;
      for (unsigned r = 0; r < len; r += 2) {
#ifdef CUSAFE_FIXED
        if (start + p[r] > tile) return 0;  // the runs overflow the tile
#endif
        if (p[r]) runs.push_back(Run{at + start, p[r], p[r + 1]});
        start += p[r];
      }
    } else if (type == 2) {  // fill
      if (len != 1) return 0;
      runs.push_back(Run{at, tile, p[0]});
    } else {
      return 0;
    }
    p += len;
  }

  Dev<uint8_t> dplane, dimg;
  Dev<Run> druns;
  const size_t npix = size_t(w) * h;
  if (!dplane.alloc(plane.size()) || !dimg.alloc(npix)) return 0;
  if (!CK(cudaMemcpy(dplane.p, plane.data(), plane.size(), cudaMemcpyHostToDevice))) return 0;
  if (!runs.empty()) {
    if (!druns.alloc(runs.size()) ||
        !CK(cudaMemcpy(druns.p, runs.data(), runs.size() * sizeof(Run), cudaMemcpyHostToDevice)))
      return 0;
    const int nruns = int(runs.size());
    expand_runs<<<(nruns + 127) / 128, 128>>>(druns.p, nruns, dplane.p);
    if (!CK(cudaGetLastError())) return 0;
  }
  const dim3 block(16, 16), grid((w + 15) / 16, (h + 15) / 16);
  untile<<<grid, block>>>(dplane.p, dimg.p, int(w), int(h), int(bs), int(nbx));
  if (!CK(cudaGetLastError()) || !CK(cudaDeviceSynchronize())) return 0;
  std::vector<uint8_t> img(npix);
  if (!CK(cudaMemcpy(img.data(), dimg.p, npix, cudaMemcpyDeviceToHost))) return 0;
  uint64_t sum = 0;
  uint32_t hash = 2166136261u;
  for (uint8_t v : img) sum += v, hash = (hash ^ v) * 16777619u;
  std::printf("block_decode: %ux%u, %ux%u tiles, %zu blocks, %zu runs: sum %llu hash %08x\n",
              w, h, bs, bs, nblocks, runs.size(), (unsigned long long)sum, hash);
  return 0;
}
