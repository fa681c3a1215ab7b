// Correct: two GPUs driven through the driver API the way libraries that manage
// contexts themselves do. The entry points come from cudaGetDriverEntryPoint (no
// -lcuda). For each device: cuDevicePrimaryCtxRetain, cuCtxSetCurrent, cuMemAlloc and
// cuMemcpyHtoD, then a runtime-API kernel launch into that current primary context.
// Then, with device 0's context current, cuMemcpy (unified addressing) copies device
// 1's block into a device-0 block and back into a second device-1 block, and
// cuMemFree releases device 1's blocks; with device 1's context current, device 0's
// blocks are released. Every result is checked on the host.
// Needs 2 GPUs: with fewer it prints "skipped: needs 2 GPUs" and exits 77.
#include "../../examples/common.h"
#include <cuda.h>
#include <cudaTypedefs.h>
#include <vector>

static void need_gpus(int want) {
  int n = 0;
  if (cudaGetDeviceCount(&n) != cudaSuccess) n = 0;
  if (n < want) {
    std::printf("skipped: needs %d GPUs, found %d\n", want, n);
    std::exit(77);
  }
}

#define DK(call)                                                                       \
  do {                                                                                 \
    CUresult r_ = (call);                                                              \
    if (r_ != CUDA_SUCCESS) {                                                          \
      std::fprintf(stderr, "%s:%d: %s failed: %d\n", __FILE__, __LINE__, #call, int(r_)); \
      std::exit(3);                                                                    \
    }                                                                                  \
  } while (0)

static PFN_cuDeviceGet_v2000 p_cuDeviceGet;
static PFN_cuDevicePrimaryCtxRetain_v7000 p_cuDevicePrimaryCtxRetain;
static PFN_cuDevicePrimaryCtxRelease_v11000 p_cuDevicePrimaryCtxRelease;
static PFN_cuCtxSetCurrent_v4000 p_cuCtxSetCurrent;
static PFN_cuCtxSynchronize_v2000 p_cuCtxSynchronize;
static PFN_cuMemAlloc_v3020 p_cuMemAlloc;
static PFN_cuMemFree_v3020 p_cuMemFree;
static PFN_cuMemcpy_v4000 p_cuMemcpy;
static PFN_cuMemcpyHtoD_v3020 p_cuMemcpyHtoD;
static PFN_cuMemcpyDtoH_v3020 p_cuMemcpyDtoH;

template <class F> static void entry(const char *name, F *fn) {
  cudaDriverEntryPointQueryResult q;
  CK(cudaGetDriverEntryPoint(name, reinterpret_cast<void **>(fn), cudaEnableDefault, &q));
  if (q != cudaDriverEntryPointSuccess || !*fn) {
    std::fprintf(stderr, "no driver entry point %s\n", name);
    std::exit(3);
  }
}

__global__ void iota_scaled(int *a, int n, int k) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) a[i] = a[i] * k + i;
}

int main() {
  need_gpus(2);
  CK(cudaFree(nullptr)); // cudart initialised: the driver is initialised too
  entry("cuDeviceGet", &p_cuDeviceGet);
  entry("cuDevicePrimaryCtxRetain", &p_cuDevicePrimaryCtxRetain);
  entry("cuDevicePrimaryCtxRelease", &p_cuDevicePrimaryCtxRelease);
  entry("cuCtxSetCurrent", &p_cuCtxSetCurrent);
  entry("cuCtxSynchronize", &p_cuCtxSynchronize);
  entry("cuMemAlloc", &p_cuMemAlloc);
  entry("cuMemFree", &p_cuMemFree);
  entry("cuMemcpy", &p_cuMemcpy);
  entry("cuMemcpyHtoD", &p_cuMemcpyHtoD);
  entry("cuMemcpyDtoH", &p_cuMemcpyDtoH);

  const int n = 3001;
  const size_t bytes = n * sizeof(int);
  std::vector<int> h(n), got(n);
  for (int i = 0; i < n; ++i) h[i] = i % 17;
  CUdevice dev[2];
  CUcontext ctx[2];
  CUdeviceptr a[2], c[2];
  for (int d = 0; d < 2; ++d) {
    DK(p_cuDeviceGet(&dev[d], d));
    DK(p_cuDevicePrimaryCtxRetain(&ctx[d], dev[d]));
    DK(p_cuCtxSetCurrent(ctx[d]));
    DK(p_cuMemAlloc(&a[d], bytes));
    DK(p_cuMemAlloc(&c[d], bytes));
    DK(p_cuMemcpyHtoD(a[d], h.data(), bytes));
    int cur = -1;
    CK(cudaGetDevice(&cur)); // the runtime follows the current primary context
    if (cur != d) {
      std::printf("runtime device %d with device %d's primary context current\n", cur, d);
      return 1;
    }
    iota_scaled<<<(n + 255) / 256, 256>>>(reinterpret_cast<int *>(a[d]), n, d + 2);
    CK(cudaGetLastError());
    DK(p_cuCtxSynchronize());
  }
  bool ok = true;
  // Device 0's context: device 1's block -> a device-0 block -> a second device-1 block.
  DK(p_cuCtxSetCurrent(ctx[0]));
  DK(p_cuMemcpy(c[0], a[1], bytes));
  DK(p_cuMemcpy(c[1], c[0], bytes));
  DK(p_cuCtxSynchronize());
  DK(p_cuMemcpyDtoH(got.data(), c[1], bytes));
  long long s1 = 0;
  for (int i = 0; i < n; ++i) {
    ok = ok && got[i] == h[i] * 3 + i;
    s1 += got[i];
  }
  DK(p_cuMemFree(a[1])); // device 1's blocks, device 0's context current
  DK(p_cuMemFree(c[1]));
  // Device 1's context: check device 0's own result, then free device 0's blocks.
  DK(p_cuCtxSetCurrent(ctx[1]));
  DK(p_cuMemcpyDtoH(got.data(), a[0], bytes));
  long long s0 = 0;
  for (int i = 0; i < n; ++i) {
    ok = ok && got[i] == h[i] * 2 + i;
    s0 += got[i];
  }
  DK(p_cuMemFree(a[0]));
  DK(p_cuMemFree(c[0]));
  DK(p_cuCtxSetCurrent(nullptr));
  for (int d = 0; d < 2; ++d) DK(p_cuDevicePrimaryCtxRelease(dev[d]));
  std::printf("device 0 block sum %lld, device 1 block sum %lld (via device 0)\n", s0, s1);
  std::printf("%s\n", ok ? "all results correct" : "WRONG RESULTS");
  return ok ? 0 : 1;
}
