// ~3.1 ms per pass on H100 (measured, plain build): 25 Jacobi steps (2 kernels each) on 16M fp32 points, 64 MB arrays, plus one reset copy.
#include "../harness.h"

// Every pass starts from the initial state: a copy kernel resets A at the start of the pass
// (part of the timed workload), so that every pass computes the same thing and the
// reference needs only tsteps steps whatever --iters says.
__global__ void copy_kernel(int n, const float *src, float *dst) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) dst[i] = src[i];
}

// B[i] = (A[i-1] + A[i] + A[i+1]) / 3 for interior points.
__global__ void jacobi1d_kernel1(int n, const float *A, float *B) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i > 0 && i < n - 1) B[i] = 0.33333f * (A[i - 1] + A[i] + A[i + 1]);
}

// A[i] = B[i] for interior points.
__global__ void jacobi1d_kernel2(int n, const float *B, float *A) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i > 0 && i < n - 1) A[i] = B[i];
}

int main(int argc, char **argv) {
  perf::Run run(argc, argv, "jacobi1d", 10);
  const int n = 1 << 24, tsteps = 25;

  std::vector<float> hA0(n);
  perf::fill(hA0, 141);

  float *A0, *A, *B;
  CK(cudaMalloc(&A0, n * sizeof(float)));
  CK(cudaMalloc(&A, n * sizeof(float)));
  CK(cudaMalloc(&B, n * sizeof(float)));
  CK(cudaMemcpy(A0, hA0.data(), n * sizeof(float), cudaMemcpyHostToDevice));
  CK(cudaMemset(B, 0, n * sizeof(float)));

  const int bs = 256;
  const unsigned grid = perf::cdiv(n, bs);
  auto pass = [&] {
    copy_kernel<<<grid, bs>>>(n, A0, A);
    for (int t = 0; t < tsteps; t++) {
      jacobi1d_kernel1<<<grid, bs>>>(n, A, B);
      jacobi1d_kernel2<<<grid, bs>>>(n, B, A);
    }
  };
  run.warmup(pass);
  run.time(pass);

  std::vector<float> hA(n);
  CK(cudaMemcpy(hA.data(), A, n * sizeof(float), cudaMemcpyDeviceToHost));

  // Reference: the same tsteps steps on the CPU, in float with the same operation order.
  std::vector<float> ra(hA0), rb(n, 0.0f);
  for (int t = 0; t < tsteps; t++) {
    for (int i = 1; i < n - 1; i++) rb[i] = 0.33333f * (ra[i - 1] + ra[i] + ra[i + 1]);
    for (int i = 1; i < n - 1; i++) ra[i] = rb[i];
  }
  bool ok = perf::close(hA.data(), ra.data(), n, 1e-3f, 1e-5f, "A");

  CK(cudaFree(A0));
  CK(cudaFree(A));
  CK(cudaFree(B));
  return run.finish(ok, perf::checksum(hA));
}
