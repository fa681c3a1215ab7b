// Shared by the bad-input programs (scripts/gpu/badinput/*.cu): self-checks that print
// "PASS what" or "FAIL what: details", CUDA codes as "CODE name=value" (run-badinput.sh
// compares them with the plain build's), and the final "RESULT PASS|FAIL" line.
#pragma once
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <cuda_runtime.h>
#include <dlfcn.h>

static int badinput_failed;

// EXPECT(what, cond, fmt, ...): one PASS or FAIL line about `what`.
#define EXPECT(what, cond, ...)                                                        \
  do {                                                                                 \
    if (cond) {                                                                        \
      std::printf("PASS %s\n", what);                                                  \
    } else {                                                                           \
      badinput_failed = 1;                                                             \
      std::printf("FAIL %s: ", what);                                                  \
      std::printf(__VA_ARGS__);                                                        \
      std::printf("\n");                                                               \
    }                                                                                  \
    std::fflush(stdout);                                                               \
  } while (0)

// A CUDA code the run compares with the same program built without cusafe.
#define CODE(name, value)                                                              \
  do {                                                                                 \
    std::printf("CODE %s=%d\n", name, (int)(value));                                   \
    std::fflush(stdout);                                                               \
  } while (0)

// A call that must work: exit 3 naming it otherwise.
#define CK(call)                                                                       \
  do {                                                                                 \
    cudaError_t err_ = (call);                                                         \
    if (err_ != cudaSuccess) {                                                         \
      std::printf("FAIL %s: %s (%d)\n", #call, cudaGetErrorString(err_), (int)err_);    \
      std::exit(3);                                                                    \
    }                                                                                  \
  } while (0)

// Whether libcusafe_rt.so is in the process (the .cusafe build links it).
static bool under_cusafe() { return dlsym(RTLD_DEFAULT, "__cusafe_rt_present") != nullptr; }

// Whether `p` is a cusafe pointer (tag 1..35 in bits 41..46).
static bool tagged(const void *p) {
  unsigned t = (unsigned)(((uintptr_t)p >> 41) & 63);
  return t >= 1 && t <= 35;
}

// The last line; exit status 10 when a check failed (cusafe's own exit status is 1).
static int finish() {
  std::printf("RESULT %s\n", badinput_failed ? "FAIL" : "PASS");
  std::fflush(stdout);
  return badinput_failed ? 10 : 0;
}

// p[i] += 1 for i < n.
__global__ void inc(int *p, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) p[i] += 1;
}

// Allocates n ints, zeroes them, runs `inc` twice and checks every element is 2.
static bool work(const char *what, int n = 1000) {
  int *d = nullptr;
  if (cudaMalloc(&d, n * sizeof(int)) != cudaSuccess) return false;
  bool ok = cudaMemset(d, 0, n * sizeof(int)) == cudaSuccess;
  inc<<<(n + 255) / 256, 256>>>(d, n);
  inc<<<(n + 255) / 256, 256>>>(d, n);
  ok = ok && cudaDeviceSynchronize() == cudaSuccess;
  int *h = (int *)std::calloc(n, sizeof(int));
  ok = ok && cudaMemcpy(h, d, n * sizeof(int), cudaMemcpyDeviceToHost) == cudaSuccess;
  for (int i = 0; ok && i < n; i++) ok = h[i] == 2;
  std::free(h);
  ok = cudaFree(d) == cudaSuccess && ok;
  EXPECT(what, ok, "allocate, launch, copy back and free did not all work");
  if (under_cusafe()) EXPECT("allocations are tagged (cusafe is on)", tagged(d), "pointer %p is untagged", (void *)d);
  return ok;
}
