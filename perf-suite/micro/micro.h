// What the block-format microbenchmarks (header_lookup.cu, phase_alias.cu) share: the
// CUDA error check, the hash that picks their random blocks, the checks' bounds compare
// and the launch timing.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>

#ifndef MICRO_NAME
#error "define MICRO_NAME (the program's name, for its error messages) before including micro.h"
#endif

// A failed runtime call ends the program with status 3, naming the call.
#define CK(x)                                                                              \
  do {                                                                                     \
    cudaError_t e_ = (x);                                                                  \
    if (e_ != cudaSuccess) {                                                               \
      std::fprintf(stderr, MICRO_NAME ": %s: %s\n", #x, cudaGetErrorString(e_));           \
      std::exit(3);                                                                        \
    }                                                                                      \
  } while (0)

// A 64-bit mix (SplitMix64's finaliser): the random place a thread reads at each step.
__device__ __forceinline__ uint64_t hash(uint64_t z) {
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

// The bounds compare of a check that found the block at `base` (its header, the payload
// size, there; the payload `prefix` bytes on): counts into `bad` a 4-byte read at `p`
// that the block does not hold.
__device__ __forceinline__ void compare(uint64_t p, uint64_t base, uint64_t prefix, unsigned *bad) {
  uint64_t size = *(const uint64_t *)base;
  if (p - (base + prefix) > size - 4) atomicAdd(bad, 1u);
}

// Milliseconds per launch of `launch` (which launches one kernel): one warm-up launch,
// then `reps` launches between two events on the default stream.
template <class F> float ms_per_launch(F launch, int reps) {
  cudaEvent_t a, b;
  CK(cudaEventCreate(&a));
  CK(cudaEventCreate(&b));
  launch();
  CK(cudaEventRecord(a));
  for (int r = 0; r < reps; r++) launch();
  CK(cudaEventRecord(b));
  CK(cudaEventSynchronize(b));
  float ms = 0;
  CK(cudaEventElapsedTime(&ms, a, b));
  CK(cudaEventDestroy(a));
  CK(cudaEventDestroy(b));
  return ms / reps;
}
