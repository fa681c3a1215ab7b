// Tiled matrix multiply C = A B (M x K times K x N) with 16 x 16 shared tiles. The
// B tile load checks its row against K, the A tile load forgets to check its column
// against K (K = 40 is not a multiple of 16): the last tile of A's last row reads
// 8 floats past the end of A. (Other rows read the next row's head, harmlessly
// multiplied by the zero-padded B tile.) Bug: heap-buffer-overflow, READ.
#include "../../examples/common.h"
#include <vector>

constexpr int T = 16;

__global__ void matmul(const float *A, const float *B, float *C, int M, int K, int N) {
  __shared__ float As[T][T], Bs[T][T];
  int row = blockIdx.y * T + threadIdx.y, col = blockIdx.x * T + threadIdx.x;
  float acc = 0;
  for (int t = 0; t < (K + T - 1) / T; ++t) {
    int ka = t * T + threadIdx.x, kb = t * T + threadIdx.y;
    As[threadIdx.y][threadIdx.x] = row < M ? A[row * K + ka] : 0.0f; // cusafe-expect: heap-buffer-overflow
    Bs[threadIdx.y][threadIdx.x] = kb < K && col < N ? B[kb * N + col] : 0.0f;
    __syncthreads();
    for (int k = 0; k < T; ++k) acc += As[threadIdx.y][k] * Bs[k][threadIdx.x];
    __syncthreads();
  }
  if (row < M && col < N) C[row * N + col] = acc;
}

int main() {
  const int M = 48, K = 40, N = 64;
  std::vector<float> a(M * K), b(K * N), c(M * N);
  for (int i = 0; i < M * K; ++i) a[i] = float(i % 5);
  for (int i = 0; i < K * N; ++i) b[i] = float(i % 3) - 1.0f;
  float *A, *B, *C;
  CK(cudaMalloc(&A, a.size() * sizeof(float)));
  CK(cudaMalloc(&B, b.size() * sizeof(float)));
  CK(cudaMalloc(&C, c.size() * sizeof(float)));
  CK(cudaMemcpy(A, a.data(), a.size() * sizeof(float), cudaMemcpyHostToDevice));
  CK(cudaMemcpy(B, b.data(), b.size() * sizeof(float), cudaMemcpyHostToDevice));
  dim3 block(T, T), grid((N + T - 1) / T, (M + T - 1) / T);
  matmul<<<grid, block>>>(A, B, C, M, K, N);
  CK(cudaDeviceSynchronize());
  CK(cudaMemcpy(c.data(), C, c.size() * sizeof(float), cudaMemcpyDeviceToHost));
  double sum = 0;
  for (int i = 0; i < (M - 1) * N; ++i) sum += c[i]; // the last row multiplied garbage by 0
  std::printf("matmul checksum (rows 0..%d) %.1f\n", M - 2, sum);
  CK(cudaFree(A));
  CK(cudaFree(B));
  CK(cudaFree(C));
  return 0;
}
