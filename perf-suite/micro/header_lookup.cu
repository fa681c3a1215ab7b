// What finding a block's header costs the device check, for three block formats: the
// question behind non-power-of-two size classes (device memory per allocation).
//
//   pow2   today's format: blocks of 2^k bytes aligned to their size; the header is at
//          p & ~(2^k - 1) (one AND, then the header load).
//   div    blocks of any size S (a multiple of 256) packed from the start of a 2 MiB
//          slab: base = slab + floor((p - slab) / S) * S, the division by a multiply
//          with a per-size magic number (__umulhi) read from constant memory by the
//          size's index (as a sub-class field of the pointer would give it).
//   table  the same packed blocks; each slab starts with a table giving, per 256-byte
//          line, how many lines back its block's header is: two dependent loads.
//   fdiv   div without the constant-memory read: the block's line count comes from the
//          pointer's own bits (a sub-class field, here bits 34..40 of the address xor a
//          kernel argument, so the compiler cannot fold it), and the division is a float
//          reciprocal (MUFU.RCP), a multiply-add and one correction step: no load but the
//          header's.
//
// Each thread checks and reads one 4-byte element per step at a pseudo-random place
// inside a random block (a gather: the worst case, no check hoisted). Blocks hold a
// 4096-byte payload: 4608 bytes packed (div and table read the same elements in the
// same order; each 2 MiB slab starts with the 16 KiB line table) or 8192 bytes (pow2).
// The buffer is 256 MiB; headers and tables are read through the caches as a real
// program's would. Prints per format the time per checked access and the ratio to the
// same gather over the same layout without a check.
// Build: nvcc -O3 -arch=native header_lookup.cu -o header_lookup
#define MICRO_NAME "header_lookup"
#include "micro.h"

#include <vector>

constexpr uint64_t SLAB = 2u << 20;
constexpr uint64_t PREFIX = 256;
constexpr uint64_t PAYLOAD = 4096;
constexpr uint64_t S_PACKED = 4608; // PREFIX + PAYLOAD + 256 (one-past-the-end room)
constexpr uint64_t S_POW2 = 8192;
constexpr uint64_t BYTES = 256u << 20;
// The packed layouts start each slab with the line table (2 bytes per 256-byte line).
constexpr uint64_t TABLE_BYTES = SLAB / 256 * 2;
constexpr uint32_t TABLE_LINES = TABLE_BYTES / 256;
constexpr int STEPS = 64;

// Magic numbers for division by (the line count of) each of 64 sizes; the benchmark
// uses one, but reads it by index as the check would.
__constant__ uint32_t c_magic[64];
__constant__ uint32_t c_lines[64];

// NONE and NONE_POW2: the gather without a check, over the packed and the pow2 layout.
enum Format { NONE = 0, POW2 = 1, DIV = 2, TABLE = 3, FDIV = 4, NONE_POW2 = 5 };

// The address of element step of thread tid: a random block, a random aligned offset.
// Gather: each thread its own place. Coalesced: a warp reads 128 consecutive bytes of
// one block (the usual access of a kernel).
template <int F, bool COALESCED>
__device__ __forceinline__ uint64_t address(uint64_t buf, uint64_t tid, int step) {
  uint64_t h = hash((COALESCED ? tid / 32 : tid) * 131 + step);
  uint64_t off = COALESCED ? ((h >> 20) % (PAYLOAD / 128)) * 128 + (tid % 32) * 4
                           : ((h >> 20) % (PAYLOAD / 4)) * 4;
  if (F == POW2 || F == NONE_POW2) return buf + (h % (BYTES / S_POW2)) * S_POW2 + PREFIX + off;
  uint64_t per_slab = (SLAB - TABLE_BYTES) / S_PACKED;
  uint64_t blk = h % ((BYTES / SLAB) * per_slab);
  return buf + (blk / per_slab) * SLAB + TABLE_BYTES + (blk % per_slab) * S_PACKED + PREFIX + off;
}

template <int F, bool COALESCED>
__global__ void gather(uint64_t buf, int sub, float *out, unsigned *bad) {
  uint64_t tid = blockIdx.x * (uint64_t)blockDim.x + threadIdx.x;
  float acc = 0;
  for (int step = 0; step < STEPS; step++) {
    uint64_t p = address<F, COALESCED>(buf, tid, step);
    if (F != NONE && F != NONE_POW2) {
      uint64_t base;
      if (F == POW2) {
        base = p & ~(S_POW2 - 1);
      } else if (F == DIV) {
        uint64_t slab = p & ~(SLAB - 1);
        uint32_t line = (uint32_t)((p - slab) >> 8);
        uint32_t idx = __umulhi(line - TABLE_LINES, c_magic[sub]);
        base = slab + TABLE_BYTES + (uint64_t)idx * (c_lines[sub] << 8);
      } else if (F == FDIV) {
        uint64_t slab = p & ~(SLAB - 1);
        uint32_t line = (uint32_t)((p - slab) >> 8) - TABLE_LINES;
        uint32_t d = (uint32_t)((p >> 34) & 127) ^ (uint32_t)sub;
        uint32_t idx = (uint32_t)fmaf((float)line, __fdividef(1.0f, (float)d), 1.0f / 1024);
        int32_t rem = (int32_t)(line - idx * d);
        idx = rem < 0 ? idx - 1 : rem >= (int32_t)d ? idx + 1 : idx;
        base = slab + TABLE_BYTES + (uint64_t)idx * (d << 8);
      } else {
        uint64_t slab = p & ~(SLAB - 1);
        uint32_t line = (uint32_t)((p - slab) >> 8);
        uint16_t back = *(const uint16_t *)(slab + line * 2);
        base = (p & ~255ull) - ((uint64_t)back << 8);
      }
      compare(p, base, PREFIX, bad);
    }
    acc += *(const float *)p;
  }
  out[tid] = acc;
}

// Writes the headers (and for TABLE the line tables) of every block of a format.
__global__ void setup(uint64_t buf, int format) {
  uint64_t i = blockIdx.x * (uint64_t)blockDim.x + threadIdx.x;
  if (format == POW2) {
    if (i < BYTES / S_POW2) *(uint64_t *)(buf + i * S_POW2) = PAYLOAD;
    return;
  }
  uint64_t per_slab = (SLAB - TABLE_BYTES) / S_PACKED;
  uint64_t slab = i / (SLAB / 256), line = i % (SLAB / 256);
  if (slab >= BYTES / SLAB) return;
  uint64_t s = buf + slab * SLAB;
  if (line >= TABLE_LINES) {
    uint64_t blk = (line - TABLE_LINES) / (S_PACKED / 256);
    if (blk < per_slab) {
      if (line == TABLE_LINES + blk * (S_PACKED / 256)) *(uint64_t *)(s + line * 256) = PAYLOAD;
      if (format == TABLE)
        *(uint16_t *)(s + line * 2) = (uint16_t)(line - TABLE_LINES - blk * (S_PACKED / 256));
    }
  }
}

template <int F, bool COALESCED>
float time_format(uint64_t buf, int sub, float *out, unsigned *bad, int grid, int block) {
  return ms_per_launch([&] { gather<F, COALESCED><<<grid, block>>>(buf, sub, out, bad); }, 20);
}

// Times the four formats and the two unchecked baselines for one access pattern;
// exits 1 when a format's check fails an in-bounds access (a bug here). fdiv_sub is the
// kernel argument that turns the buffer's address bits 34..40 into the block's line count.
template <bool COALESCED>
void run(void *raw, uint64_t buf, int fdiv_sub, float *out, unsigned *bad, int grid, int block,
         double accesses) {
  const char *pattern = COALESCED ? "coalesced" : "gather";
  CK(cudaMemset(raw, 0, BYTES + SLAB));
  const float none_packed = time_format<NONE, COALESCED>(buf, 0, out, bad, grid, block);
  const float none_pow2 = time_format<NONE_POW2, COALESCED>(buf, 0, out, bad, grid, block);
  std::printf("header_lookup pattern=%s format=none layout=pow2 ms=%.4f ns_per_access=%.4f\n", pattern,
              none_pow2, none_pow2 * 1e6 / accesses);
  std::printf("header_lookup pattern=%s format=none layout=packed ms=%.4f ns_per_access=%.4f\n", pattern,
              none_packed, none_packed * 1e6 / accesses);
  const uint64_t n = BYTES / 256;
  for (int f = POW2; f <= FDIV; f++) {
    CK(cudaMemset(raw, 0, BYTES + SLAB));
    CK(cudaMemset(bad, 0, sizeof(unsigned)));
    setup<<<(unsigned)((n + 255) / 256), 256>>>(buf, f);
    CK(cudaGetLastError());
    float ms = f == POW2    ? time_format<POW2, COALESCED>(buf, 0, out, bad, grid, block)
               : f == DIV   ? time_format<DIV, COALESCED>(buf, 5, out, bad, grid, block)
               : f == TABLE ? time_format<TABLE, COALESCED>(buf, 0, out, bad, grid, block)
                            : time_format<FDIV, COALESCED>(buf, fdiv_sub, out, bad, grid, block);
    unsigned nbad = 0;
    CK(cudaMemcpy(&nbad, bad, sizeof nbad, cudaMemcpyDeviceToHost));
    if (nbad) {
      std::fprintf(stderr, "header_lookup: format %d failed %u in-bounds accesses (a bug here)\n", f, nbad);
      std::exit(1);
    }
    const float none = f == POW2 ? none_pow2 : none_packed;
    std::printf("header_lookup pattern=%s format=%s ms=%.4f ns_per_access=%.4f vs_unchecked=%.3f\n", pattern,
                f == POW2 ? "pow2" : f == DIV ? "div" : f == TABLE ? "table" : "fdiv", ms, ms * 1e6 / accesses, ms / none);
  }
}

int main() {
  std::vector<uint32_t> magic(64), lines(64);
  for (int m = 0; m < 64; m++) {
    uint32_t d = (uint32_t)(S_PACKED / 256) + (uint32_t)m - 5; // index 5 is S_PACKED
    lines[m] = d;
    magic[m] = (uint32_t)((((uint64_t)1 << 32) + d - 1) / d); // exact for line < 2^16
  }
  CK(cudaMemcpyToSymbol(c_magic, magic.data(), sizeof(uint32_t) * 64));
  CK(cudaMemcpyToSymbol(c_lines, lines.data(), sizeof(uint32_t) * 64));
  void *raw;
  CK(cudaMalloc(&raw, BYTES + SLAB));
  uint64_t buf = ((uint64_t)raw + SLAB - 1) & ~(SLAB - 1);
  if ((buf >> 34) != ((buf + BYTES - 1) >> 34)) {
    std::fprintf(stderr, "header_lookup: the buffer crosses a 16 GiB boundary, so fdiv's field "
                         "differs inside it; run again (the driver places it elsewhere)\n");
    std::exit(2);
  }
  const int fdiv_sub = (int)(((buf >> 34) & 127) ^ (S_PACKED / 256));
  const int block = 256, grid = 132 * 16;
  float *out;
  unsigned *bad;
  CK(cudaMalloc(&out, sizeof(float) * grid * block));
  CK(cudaMalloc(&bad, sizeof(unsigned)));
  const double accesses = (double)grid * block * STEPS;
  cudaDeviceProp prop;
  CK(cudaGetDeviceProperties(&prop, 0));
  std::printf("header_lookup gpu=\"%s\" accesses=%.0f\n", prop.name, accesses);
  run<false>(raw, buf, fdiv_sub, out, bad, grid, block, accesses);
  run<true>(raw, buf, fdiv_sub, out, bad, grid, block, accesses);
  return 0;
}
