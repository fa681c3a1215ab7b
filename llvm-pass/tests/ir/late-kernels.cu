// Kernels given index groups are replaced at the end of the pipeline (launch.rs), after
// the optimizer has freed functions. NVPTX caches `!nvvm.annotations` by function
// address and keeps a freed function's entry, so a replacement at such an address was
// emitted as a `.func` (cudart then failed every launch of it with "named symbol not
// found": lu, gaussian, jacobi2d, bfs and fdtd2d in a GPU run); the replacement now
// also carries the `ptx_kernel` calling convention. Without it, these two workloads'
// kernels lose `.entry` with this toolchain (backprop one of four, fdtd2d two of three).
// RUN: %cusafe_clangxx -O3 -g --cuda-device-only --cuda-gpu-arch=sm_90 -S -o - %S/../../../perf-suite/workloads/backprop.cu | FileCheck %s --check-prefix=BACKPROP
// RUN: %cusafe_clangxx -O3 -g --cuda-device-only --cuda-gpu-arch=sm_90 -S -o - %S/../../../perf-suite/workloads/fdtd2d.cu | FileCheck %s --check-prefix=FDTD
// BACKPROP-DAG: .visible .entry _ZN12_GLOBAL__N_112layerforwardEPKfS1_Pfi(
// BACKPROP-DAG: .visible .entry _ZN12_GLOBAL__N_114reduce_partialEPKfPfii(
// BACKPROP-DAG: .visible .entry _ZN12_GLOBAL__N_113hidden_outputEPKfiS1_S1_S1_PfS2_S2_S2_f(
// BACKPROP-DAG: .visible .entry _ZN12_GLOBAL__N_114adjust_weightsEPKfS1_S1_S1_PfS2_i(
// FDTD-DAG: .visible .entry _Z12reset_kerneliPKfS0_S0_PfS1_S1_(
// FDTD-DAG: .visible .entry _Z13fdtd_e_kerneliiiPKfPfS1_S0_(
// FDTD-DAG: .visible .entry _Z13fdtd_h_kerneliiPKfS0_Pf(
