// The pass runs inside clang at every optimisation level (OptimizerLast runs at -O0
// too); each build goes through ptxas and our fatbinary, and every global access of
// the kernel is checked.
// RUN: %cusafe_clangxx -O0 -c %s -o %t0.o 2>&1 | FileCheck %s --check-prefix=O0
// RUN: %cusafe_clangxx -O1 -c %s -o %t1.o 2>&1 | FileCheck %s --check-prefix=OPT
// RUN: %cusafe_clangxx -O2 -g -c %s -o %t2.o 2>&1 | FileCheck %s --check-prefix=OPT
// RUN: %cusafe_clangxx -O3 --cuda-gpu-arch=sm_80 --cuda-gpu-arch=sm_90 -c %s -o %t3.o 2>&1 | FileCheck %s --check-prefix=OPT
// RUN: %cusafe_clangxx --cusafe-no-instrument -O2 -c %s -o %t4.o 2>&1 | FileCheck %s --check-prefix=PLAIN --allow-empty

__global__ void saxpy(float a, const float *x, float *y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = a * x[i] + y[i];
}

// At -O0 every load of a local variable is an access too (to allocas: static, not
// heap-checked), and the pointers themselves are reloaded from allocas first.
// O0: cusafe: kernel _Z5saxpyfPKfPfi: 3 checks (2 loads, 1 stores, 0 atomics, 0 ranges; 0 against known objects), 0 arithmetic rules, {{[0-9]+}} proven in bounds
// With optimisation the store to y[i] is covered by the dominating check of the load
// of y[i] (same root, address and length): removed; the loads of x[i] and y[i] are one
// compare of i (an index group, index-group.ll).
// OPT: cusafe: kernel _Z5saxpyfPKfPfi: 1 checks (1 loads, 0 stores, 0 atomics, 0 ranges; 0 against known objects), 0 arithmetic rules, 0 proven in bounds, 1 removed (dominated), 1 merged (neighbouring), 1 of them by index
// PLAIN-NOT: cusafe:
