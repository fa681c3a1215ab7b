// Inside clang, kernels get their window parameters at the start of the pipeline
// (launch.rs; the rewrite at OptimizerLast could reuse the address of a freed function
// that NVPTX's annotation cache remembers as no kernel, and turn the kernel into a
// .func). Every kernel stays an entry with its launch bounds, at every -O level.
// RUN: %cusafe_clangxx -O3 --cuda-device-only -S %s -o - | FileCheck %s
// RUN: %cusafe_clangxx -O0 --cuda-device-only -S %s -o - | FileCheck %s
// RUN: %cusafe_clangxx --cusafe-no-launch-bounds -O3 --cuda-device-only -S %s -o - | FileCheck %s --check-prefix=OFF
// The replaced kernel must never be freed either: as a declaration the pipeline freed
// it, and in this suite program the device runtime's __cusafe_trap, linked later, took
// its address and came out an .entry (the program then hung in its report).
// RUN: %cusafe_clangxx -O3 --cuda-device-only -S %S/../../../security-suite/programs/shared_lut_read_neighbour.cu -o - | FileCheck %s --check-prefix=RT
// RT-NOT: .entry __cusafe
// RT: .func __cusafe_trap
// RT-NOT: .entry __cusafe

__device__ __noinline__ float twice(const float *p, int i) { return 2.0f * p[i]; }
__device__ float thrice(const float *p, int i) { return 3.0f * p[i]; }

// CHECK-DAG: .visible .global .align 1 .b8 __cusafe_windows__Z5firstPKfPfi[3] = {1, 1};
// CHECK-DAG: .visible .global .align 1 .b8 __cusafe_windows__Z6secondPfPKfl[3] = {1, 1, 1};
// CHECK-LABEL: .visible .entry _Z5firstPKfPfi(
// CHECK: .param .u64 _Z5firstPKfPfi_param_6
// CHECK: .maxntid 256, 1, 1
__global__ void __launch_bounds__(256) first(const float *x, float *y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = twice(x, i) + thrice(x, i);
}

// CHECK-LABEL: .visible .entry _Z6secondPfPKfl(
// CHECK: .param .u64 _Z6secondPfPKfl_param_8
// CHECK: .maxntid 128, 1, 1
__global__ void __launch_bounds__(128, 4) second(float *y, const float *x, long n) {
  long i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = thrice(x, i);
}

// OFF-NOT: __cusafe_windows
// OFF: .visible .entry _Z5firstPKfPfi(
// OFF-NOT: _param_3
// OFF: .maxntid 256, 1, 1
