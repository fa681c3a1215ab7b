// first_call MODE: MODE is the process's very first CUDA call, before any device is
// chosen; then the program works as usual (allocate, launch, copy, free; tagged under
// cusafe). MODE: malloc, memcpy (host to host), launch, sync, last (cudaGetLastError),
// set_device_bad (cudaSetDevice to an ordinal that does not exist: CUDA's
// cudaErrorInvalidDevice, the same code as without cusafe, and the device stays 0).
#include "check.h"

__device__ int flag;
__global__ void set_flag() { flag = 42; }

int main(int argc, char **argv) {
  const char *mode = argc > 1 ? argv[1] : "";
  if (!std::strcmp(mode, "malloc")) {
    void *p = nullptr;
    cudaError_t e = cudaMalloc(&p, 400);
    EXPECT("cudaMalloc first", e == cudaSuccess, "returned %d", (int)e);
    if (under_cusafe()) EXPECT("the first allocation is tagged", tagged(p), "%p", p);
    CK(cudaFree(p));
  } else if (!std::strcmp(mode, "memcpy")) {
    static int a[64], b[64];
    for (int i = 0; i < 64; i++) a[i] = i;
    cudaError_t e = cudaMemcpy(b, a, sizeof a, cudaMemcpyHostToHost);
    CODE("memcpy_first", e);
    EXPECT("cudaMemcpy first", e == cudaSuccess && b[63] == 63, "returned %d", (int)e);
  } else if (!std::strcmp(mode, "launch")) {
    set_flag<<<1, 1>>>();
    cudaError_t e = cudaDeviceSynchronize();
    int v = 0;
    CK(cudaMemcpyFromSymbol(&v, flag, sizeof v));
    EXPECT("a kernel launch first", e == cudaSuccess && v == 42, "sync %d, flag %d", (int)e, v);
  } else if (!std::strcmp(mode, "sync")) {
    cudaError_t e = cudaDeviceSynchronize();
    CODE("sync_first", e);
    EXPECT("cudaDeviceSynchronize first", e == cudaSuccess, "returned %d", (int)e);
  } else if (!std::strcmp(mode, "last")) {
    cudaError_t e = cudaGetLastError();
    CODE("last_first", e);
    EXPECT("cudaGetLastError first", e == cudaSuccess, "returned %d", (int)e);
  } else if (!std::strcmp(mode, "set_device_bad")) {
    int n = 0;
    CK(cudaGetDeviceCount(&n));
    cudaError_t e = cudaSetDevice(n + 7);
    CODE("set_device_past_count", e);
    EXPECT("cudaSetDevice(count + 7) is cudaErrorInvalidDevice", e == cudaErrorInvalidDevice, "returned %d", (int)e);
    e = cudaSetDevice(-1);
    CODE("set_device_negative", e);
    EXPECT("cudaSetDevice(-1) fails", e != cudaSuccess, "returned %d", (int)e);
    cudaGetLastError(); // the failed calls' error is not sticky
    int d = -1;
    CK(cudaGetDevice(&d));
    EXPECT("the device is still 0", d == 0, "cudaGetDevice = %d", d);
  } else {
    std::printf("usage: first_call malloc|memcpy|launch|sync|last|set_device_bad\n");
    return 2;
  }
  work("then the program works as usual");
  return finish();
}
