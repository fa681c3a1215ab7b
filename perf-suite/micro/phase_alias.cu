// What a *phased* block format would cost: the candidate for packing blocks smaller than
// 2 MiB at strides that are not powers of two (device memory per allocation) while the
// check still finds a header without a division.
//
// The format: a block of class t is still 2^(t+3) bytes of address space (B), but blocks
// are packed in their slab at multiples of a grain G = max(256, B / 256), so a block's
// start is p * G modulo B for a *phase* p. The slab's physical memory is mapped once per
// phase it holds blocks of, each mapping in its own sub-window of the class's window, and
// the pointer's address bits (here 29..33, one 512 MiB sub-window per phase) say which:
//   phase = (p >> 29) & 31,  pG = phase * G,  base = ((p - pG) & ~(B - 1)) + pG.
// No division and no table: a shift, two masks, a subtraction and an addition more than
// today's check (base = p & ~(B - 1)). The price is elsewhere: one physical page is seen
// through up to 256 virtual pages (TLB reach), and a slab takes one mapping per phase.
//
// This program measures both, on the driver's virtual memory API, for blocks with a
// 4096-byte payload (B = 8 KiB, G = 256, 32 phases; packed: 4352 bytes, a header prefix of
// 256 and the payload, 481 to a 2 MiB slab):
//   layouts  pow2     today's: 8 KiB blocks, one mapping;
//            packed   4352-byte blocks, one mapping (what div formats would read);
//            phased   the packed blocks, each read through its phase's mapping (32).
//   checks   pow2 on pow2, phase on phased, and each layout's gather without a check.
// Gather: each thread checks and reads 4 bytes at a random place of a random block, 64
// times (no check hoisted: the worst case); coalesced: a warp reads 128 bytes of one
// block. Also times cuMemMap + cuMemSetAccess of one 2 MiB chunk at 256 addresses (a
// slab's mappings) and checks that a store through one alias is read through another.
// Exits 1 if a check fails an in-bounds access (a bug here), 3 on a CUDA error.
// Build: cusafe-clang++ --cusafe-no-instrument -O3 phase_alias.cu (scripts/build-bench.sh)
//        or nvcc -O3 -arch=native phase_alias.cu
#define MICRO_NAME "phase_alias"
#include "micro.h"

#include <cuda.h>

#include <chrono>

#define CU(x)                                                                              \
  do {                                                                                     \
    CUresult r_ = (x);                                                                     \
    if (r_ != CUDA_SUCCESS) {                                                              \
      std::fprintf(stderr, "phase_alias: %s: driver error %d\n", #x, (int)r_);             \
      std::exit(3);                                                                        \
    }                                                                                      \
  } while (0)

constexpr uint64_t GRANULE = 2u << 20;
constexpr uint64_t PREFIX = 256;
constexpr uint64_t PAYLOAD = 4096;
constexpr uint64_t B = 8192;                  // the class's block size
constexpr uint64_t GRAIN = 256;               // max(256, B / 256)
constexpr uint64_t PHASES = B / GRAIN;        // 32
constexpr uint64_t L = PREFIX + PAYLOAD;      // a packed block: 4352 bytes
constexpr uint64_t PER_SLAB = GRANULE / L;    // 481
constexpr uint64_t BYTES = 256u << 20;        // the physical memory of every layout
constexpr uint64_t SLABS = BYTES / GRANULE;   // 128
constexpr int SUB_SHIFT = 29;                 // a phase's sub-window: 512 MiB
constexpr uint64_t SUB = 1ull << SUB_SHIFT;
constexpr int STEPS = 64;

enum Layout { POW2 = 0, PACKED = 1, PHASED = 2 };

// The driver entry points, found through the runtime (no libcuda link needed).
struct Driver {
  decltype(&cuMemCreate) create;
  decltype(&cuMemAddressReserve) reserve;
  decltype(&cuMemMap) map;
  decltype(&cuMemSetAccess) access;
  decltype(&cuMemUnmap) unmap;
};

template <class F> void entry(const char *name, F *f) {
  cudaDriverEntryPointQueryResult q;
  CK(cudaGetDriverEntryPoint(name, (void **)f, cudaEnableDefault, &q));
  if (q != cudaDriverEntryPointSuccess) {
    std::fprintf(stderr, "phase_alias: the driver has no %s\n", name);
    std::exit(3);
  }
}

// The address of element `step` of thread `tid` in `layout` (mapped at `va`, the
// phased layout's phase 0 sub-window at `va`).
template <int LAYOUT, bool COALESCED>
__device__ __forceinline__ uint64_t address(uint64_t va, uint64_t tid, int step) {
  uint64_t h = hash((COALESCED ? tid / 32 : tid) * 131 + step);
  uint64_t off = COALESCED ? ((h >> 20) % (PAYLOAD / 128)) * 128 + (tid % 32) * 4
                           : ((h >> 20) % (PAYLOAD / 4)) * 4;
  if (LAYOUT == POW2) return va + (h % (BYTES / B)) * B + PREFIX + off;
  uint64_t blk = h % (SLABS * PER_SLAB);
  uint64_t o = (blk / PER_SLAB) * GRANULE + (blk % PER_SLAB) * L;
  uint64_t phase = LAYOUT == PHASED ? (o / GRAIN) % PHASES : 0;
  return va + phase * SUB + o + PREFIX + off;
}

template <int LAYOUT, bool CHECK, bool COALESCED>
__global__ void gather(uint64_t va, unsigned mix, float *out, unsigned *bad) {
  uint64_t tid = blockIdx.x * (uint64_t)blockDim.x + threadIdx.x;
  float acc = 0;
  for (int step = 0; step < STEPS; step++) {
    uint64_t p = address<LAYOUT, COALESCED>(va, tid, step);
    if (CHECK) {
      uint64_t base;
      if (LAYOUT == POW2) {
        base = p & ~(B - 1);
      } else {
        // `mix` is 0 at run time; the compiler cannot fold the phase from the address.
        uint64_t pg = (((p >> SUB_SHIFT) ^ mix) & (PHASES - 1)) * GRAIN;
        base = ((p - pg) & ~(B - 1)) + pg;
      }
      compare(p, base, PREFIX, bad);
    }
    acc += *(const float *)p;
  }
  out[tid] = acc;
}

// Writes the header (the payload size) of every block of `layout`, through `va`.
__global__ void setup(uint64_t va, int layout) {
  uint64_t i = blockIdx.x * (uint64_t)blockDim.x + threadIdx.x;
  if (layout == POW2) {
    if (i < BYTES / B) *(uint64_t *)(va + i * B) = PAYLOAD;
    return;
  }
  if (i >= SLABS * PER_SLAB) return;
  uint64_t o = (i / PER_SLAB) * GRANULE + (i % PER_SLAB) * L;
  *(uint64_t *)(va + o) = PAYLOAD;
}

__global__ void probe(uint64_t a, uint64_t b, unsigned *out) {
  *(volatile unsigned *)a = 0x5eed1234u;
  __threadfence();
  out[0] = *(volatile unsigned *)b;
}

template <int LAYOUT, bool CHECK, bool COALESCED>
float time_one(uint64_t va, float *out, unsigned *bad, int grid, int block) {
  float ms = ms_per_launch(
      [&] { gather<LAYOUT, CHECK, COALESCED><<<grid, block>>>(va, 0, out, bad); }, 20);
  unsigned nbad = 0;
  CK(cudaMemcpy(&nbad, bad, sizeof nbad, cudaMemcpyDeviceToHost));
  if (nbad) {
    std::fprintf(stderr, "phase_alias: the check of layout %d failed %u in-bounds accesses (a bug here)\n",
                 LAYOUT, nbad);
    std::exit(1);
  }
  return ms;
}

template <bool COALESCED>
void run(uint64_t pow2_va, uint64_t packed_va, uint64_t phased_va, float *out, unsigned *bad,
         int grid, int block, double accesses) {
  const char *pattern = COALESCED ? "coalesced" : "gather";
  struct Row {
    const char *layout, *check;
    float ms;
  } rows[] = {
      {"pow2", "none", time_one<POW2, false, COALESCED>(pow2_va, out, bad, grid, block)},
      {"pow2", "pow2", time_one<POW2, true, COALESCED>(pow2_va, out, bad, grid, block)},
      {"packed", "none", time_one<PACKED, false, COALESCED>(packed_va, out, bad, grid, block)},
      {"phased", "none", time_one<PHASED, false, COALESCED>(phased_va, out, bad, grid, block)},
      {"phased", "phase", time_one<PHASED, true, COALESCED>(phased_va, out, bad, grid, block)},
  };
  for (const Row &r : rows)
    std::printf("phase_alias pattern=%s layout=%s check=%s ms=%.4f ns_per_access=%.5f\n", pattern,
                r.layout, r.check, r.ms, r.ms * 1e6 / accesses);
}

int main() {
  CK(cudaFree(0));
  Driver d;
  entry("cuMemCreate", &d.create);
  entry("cuMemAddressReserve", &d.reserve);
  entry("cuMemMap", &d.map);
  entry("cuMemSetAccess", &d.access);
  entry("cuMemUnmap", &d.unmap);
  int dev = 0;
  CK(cudaGetDevice(&dev));
  CUmemAllocationProp prop = {};
  prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
  prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
  prop.location.id = dev;
  CUmemAccessDesc rw = {};
  rw.location = prop.location;
  rw.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
  auto map = [&](CUdeviceptr va, size_t bytes, CUmemGenericAllocationHandle h) {
    CU(d.map(va, bytes, 0, h, 0));
    CU(d.access(va, bytes, &rw, 1));
  };

  // Three physical allocations of 256 MiB: pow2, packed (one mapping each), and the
  // phased layout's, mapped once per phase at va + phase * 512 MiB.
  CUmemGenericAllocationHandle h[3];
  CUdeviceptr va[3];
  for (int k = 0; k < 3; k++) {
    CU(d.create(&h[k], BYTES, &prop, 0));
    const size_t span = k == PHASED ? PHASES * SUB : BYTES;
    CU(d.reserve(&va[k], span, k == PHASED ? PHASES * SUB : GRANULE, 0, 0));
    for (uint64_t p = 0; p < (k == PHASED ? PHASES : 1); p++) map(va[k] + p * SUB, BYTES, h[k]);
  }
  // The phase field must be the address's bits 29..33: the reservation is aligned to 16 GiB.
  if (((uint64_t)va[PHASED] >> SUB_SHIFT) % PHASES != 0) {
    std::fprintf(stderr, "phase_alias: the phased reservation is not aligned to 16 GiB\n");
    return 3;
  }
  const uint64_t n = BYTES / 256;
  CK(cudaMemset((void *)va[POW2], 0, BYTES));
  CK(cudaMemset((void *)va[PACKED], 0, BYTES));
  CK(cudaMemset((void *)va[PHASED], 0, BYTES));
  setup<<<(unsigned)((n + 255) / 256), 256>>>(va[POW2], POW2);
  setup<<<(unsigned)((n + 255) / 256), 256>>>(va[PACKED], PACKED);
  setup<<<(unsigned)((n + 255) / 256), 256>>>(va[PHASED], PHASED);
  CK(cudaGetLastError());

  unsigned *bad;
  CK(cudaMalloc(&bad, 4 * sizeof(unsigned)));
  CK(cudaMemset(bad, 0, 4 * sizeof(unsigned)));
  // A store through phase 7's mapping is read through phase 30's.
  probe<<<1, 1>>>(va[PHASED] + 7 * SUB + 12345 * 4, va[PHASED] + 30 * SUB + 12345 * 4, bad + 1);
  unsigned seen = 0;
  CK(cudaMemcpy(&seen, bad + 1, sizeof seen, cudaMemcpyDeviceToHost));
  CK(cudaMemset(bad, 0, 4 * sizeof(unsigned)));

  cudaDeviceProp dp;
  CK(cudaGetDeviceProperties(&dp, dev));
  const int block = 256, grid = dp.multiProcessorCount * 16;
  float *out;
  CK(cudaMalloc(&out, sizeof(float) * grid * block));
  const double accesses = (double)grid * block * STEPS;
  std::printf("phase_alias gpu=\"%s\" accesses=%.0f alias_store_seen=%s\n", dp.name, accesses,
              seen == 0x5eed1234u ? "yes" : "no");
  if (seen != 0x5eed1234u) return 1;
  run<false>(va[POW2], va[PACKED], va[PHASED], out, bad, grid, block, accesses);
  run<true>(va[POW2], va[PACKED], va[PHASED], out, bad, grid, block, accesses);

  // A slab's mappings: one 2 MiB chunk mapped (and made accessible) at 256 addresses,
  // then unmapped, timed on the host.
  CUmemGenericAllocationHandle chunk;
  CU(d.create(&chunk, GRANULE, &prop, 0));
  CUdeviceptr win;
  CU(d.reserve(&win, 256 * GRANULE, GRANULE, 0, 0));
  auto t0 = std::chrono::steady_clock::now();
  for (int k = 0; k < 256; k++) map(win + k * GRANULE, GRANULE, chunk);
  auto t1 = std::chrono::steady_clock::now();
  for (int k = 0; k < 256; k++) CU(d.unmap(win + k * GRANULE, GRANULE));
  auto t2 = std::chrono::steady_clock::now();
  auto us = [](auto a, auto b) { return std::chrono::duration<double, std::micro>(b - a).count(); };
  std::printf("phase_alias mappings=256 map_us_each=%.2f unmap_us_each=%.2f\n", us(t0, t1) / 256,
              us(t1, t2) / 256);
  return 0;
}
