// Launch resources on a GPU: `heavy` takes 152 registers per thread once instrumented
// (64 plain; ptxas 12.5, -O2) and declares no launch bounds. Built with cusafe-clang++,
// the build warns about it; run, it prints the driver's block limit, launches 1024
// threads (refused with 701: the runtime explains it once) and then the limit (runs).
//   cusafe-clang++ -O2 launch_resources.cu -o launch_resources
// Expected on an H100: "heavy regs=152 maxThreadsPerBlock=384", "launch 1024: 701",
// "launch max: 0", and cusafe's line naming 384 threads.
#include <cstdio>
__global__ void heavy(float *out, const float *in, int n) {
  float acc[48];
#pragma unroll
  for (int j = 0; j < 48; j++) acc[j] = in[threadIdx.x + j * 7];
  for (int it = 0; it < n; it++) {
#pragma unroll
    for (int j = 0; j < 48; j++) acc[j] = acc[j] * acc[(j + 1) % 48] + in[(it + j) & 1023];
  }
  float s = 0;
#pragma unroll
  for (int j = 0; j < 48; j++) s += acc[j];
  out[threadIdx.x] = s;
}
__global__ void __launch_bounds__(256) bounded(float *out, const float *in, int n) { out[threadIdx.x] = in[threadIdx.x] * n; }

int main() {
  cudaFuncAttributes a;
  cudaFuncGetAttributes(&a, heavy);
  printf("heavy regs=%d maxThreadsPerBlock=%d\n", a.numRegs, a.maxThreadsPerBlock);
  float *o, *i;
  cudaMalloc(&o, 4096 * 4); cudaMalloc(&i, 4096 * 4);
  heavy<<<1, 1024>>>(o, i, 2);
  printf("launch 1024: %d\n", (int)cudaGetLastError());
  heavy<<<1, a.maxThreadsPerBlock>>>(o, i, 2);
  printf("launch max: %d\n", (int)cudaDeviceSynchronize());
  cudaFree(o); cudaFree(i);
  return 0;
}
