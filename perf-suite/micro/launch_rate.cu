// What a kernel launch costs the host, plain and with cusafe: N back-to-back launches of
// a small kernel with three pointer parameters, timed on the host (the launch calls
// themselves, then until the GPU is done). Launch-bound programs (gaussian and lu in
// the perf suite make about 4,100 launches per pass) run at this rate.
// Run the plain build, the plain build with LD_PRELOAD=libcusafe_rt.so (the runtime's
// hooks alone), and the cusafe build (hooks plus launch-time windows for the
// instrumented kernel's pointer parameters). Built plain with -DLAUNCH_RATE_ICALL, the
// kernel also holds a never-taken indirect call, as the instrumented kernel's cold
// path does (does the call alone change what a launch costs?). Prints one line:
//   launch_rate launches=N issue_us=... total_us=...   (microseconds per launch)
#include <cuda_runtime.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>

#ifdef LAUNCH_RATE_ICALL
__device__ void cold_report(float *y) {
  y[0] = -1.0f;
  __trap();
}
__device__ void (*cold_slot)(float *) = cold_report;
#endif

__global__ void axpy(float *y, const float *x, const float *a, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
#ifdef LAUNCH_RATE_ICALL
  if (n < 0) cold_slot(y); // never taken: the launches pass n = 4096
#endif
  if (i < n) y[i] += a[0] * x[i];
}

int main(int argc, char **argv) {
  const int launches = argc > 1 ? std::atoi(argv[1]) : 20000;
  if (launches < 1) {
    std::fprintf(stderr, "launch_rate: give a positive number of launches (default 20000)\n");
    return 2;
  }
  const int n = 4096;
  float *y, *x, *a;
  if (cudaMalloc(&y, n * sizeof(float)) || cudaMalloc(&x, n * sizeof(float)) ||
      cudaMalloc(&a, sizeof(float)) || cudaMemset(y, 0, n * sizeof(float)) ||
      cudaMemset(x, 0, n * sizeof(float)) || cudaMemset(a, 0, sizeof(float))) {
    std::fprintf(stderr, "launch_rate: allocation failed\n");
    return 3;
  }
  for (int i = 0; i < 100; i++) axpy<<<n / 256, 256>>>(y, x, a, n); // warm-up
  if (cudaDeviceSynchronize()) return 3;
  auto t0 = std::chrono::steady_clock::now();
  for (int i = 0; i < launches; i++) axpy<<<n / 256, 256>>>(y, x, a, n);
  auto t1 = std::chrono::steady_clock::now();
  if (cudaDeviceSynchronize() || cudaGetLastError()) {
    std::fprintf(stderr, "launch_rate: a launch failed\n");
    return 3;
  }
  auto t2 = std::chrono::steady_clock::now();
  auto us = [&](auto a, auto b) { return std::chrono::duration<double, std::micro>(b - a).count() / launches; };
  std::printf("launch_rate launches=%d issue_us=%.3f total_us=%.3f\n", launches, us(t0, t1), us(t0, t2));
  cudaFree(y);
  cudaFree(x);
  cudaFree(a);
  return 0;
}
