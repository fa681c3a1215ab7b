// cudaFree(NULL) (as the very first CUDA call and later), cudaFreeAsync(NULL, stream) on
// the legacy and a created stream, and the driver's cuMemFree(0) and cuMemFreeAsync(0, s)
// (found with cudaGetDriverEntryPoint, as cudart and the frameworks find them): each is
// a success, with no cusafe report (run with report_api_errors=1 and detect_leaks=1).
#include "check.h"
#include <cuda.h>

int main() {
  cudaError_t e = cudaFree(nullptr);
  CODE("cudaFree_null_first", e);
  EXPECT("cudaFree(NULL) as the first call", e == cudaSuccess, "returned %d", (int)e);
  cudaStream_t s;
  CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  e = cudaFreeAsync(nullptr, 0);
  CODE("cudaFreeAsync_null_legacy", e);
  EXPECT("cudaFreeAsync(NULL, 0)", e == cudaSuccess, "returned %d", (int)e);
  e = cudaFreeAsync(nullptr, s);
  CODE("cudaFreeAsync_null_stream", e);
  EXPECT("cudaFreeAsync(NULL, s)", e == cudaSuccess, "returned %d", (int)e);
  void *a;
  CK(cudaMalloc(&a, 400));
  e = cudaFree(nullptr);
  CODE("cudaFree_null", e);
  EXPECT("cudaFree(NULL) with a live allocation", e == cudaSuccess, "returned %d", (int)e);
  void *fn = nullptr, *fn_async = nullptr;
  cudaDriverEntryPointQueryResult q;
  CK(cudaGetDriverEntryPoint("cuMemFree", &fn, cudaEnableDefault, &q));
  CK(cudaGetDriverEntryPoint("cuMemFreeAsync", &fn_async, cudaEnableDefault, &q));
  CUresult r = ((CUresult(*)(CUdeviceptr))fn)(0);
  CODE("cuMemFree_0", r);
  EXPECT("cuMemFree(0)", r == CUDA_SUCCESS, "returned %d", (int)r);
  r = ((CUresult(*)(CUdeviceptr, CUstream))fn_async)(0, (CUstream)s);
  CODE("cuMemFreeAsync_0", r);
  EXPECT("cuMemFreeAsync(0, s)", r == CUDA_SUCCESS, "returned %d", (int)r);
  CK(cudaStreamSynchronize(s));
  CK(cudaFree(a));
  e = cudaGetLastError();
  EXPECT("no error left behind", e == cudaSuccess, "cudaGetLastError() = %d", (int)e);
  work("the program goes on");
  return finish();
}
