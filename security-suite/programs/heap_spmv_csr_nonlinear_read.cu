// CSR sparse matrix-vector product y = A x with 64-bit column indices. One column
// index is corrupt (a stale partition map numbered it in a larger global vector), so
// that row reads far past the end of x, straight into another live buffer without
// touching anything in between: guard-zone tools see a valid address.
// Bug: heap-buffer-overflow, READ (non-linear, into another live buffer).
#include "../../examples/common.h"
#include <vector>

__global__ void spmv(const long long *rowptr, const long long *col, const float *val,
                     const float *x, float *y, int rows) {
  int r = blockIdx.x * blockDim.x + threadIdx.x;
  if (r >= rows) return;
  float acc = 0;
  for (long long j = rowptr[r]; j < rowptr[r + 1]; ++j) acc += val[j] * x[col[j]]; // cusafe-expect: heap-buffer-overflow
  y[r] = acc;
}

int main() {
  const int n = 1024; // square matrix: a 1-D Laplacian (tridiagonal)
  std::vector<long long> rowptr(n + 1), col;
  std::vector<float> val;
  for (int r = 0; r < n; ++r) {
    rowptr[r] = (long long)col.size();
    for (int c = r - 1; c <= r + 1; ++c)
      if (c >= 0 && c < n) {
        col.push_back(c);
        val.push_back(c == r ? 2.0f : -1.0f);
      }
  }
  rowptr[n] = (long long)col.size();
  long long nnz = rowptr[n];
  float *x, *halo, *y, *dval;
  long long *drow, *dcol;
  CK(cudaMalloc(&x, n * sizeof(float)));
  CK(cudaMalloc(&halo, n * sizeof(float))); // another live buffer (ghost values)
  CK(cudaMalloc(&y, n * sizeof(float)));
  CK(cudaMalloc(&dval, nnz * sizeof(float)));
  CK(cudaMalloc(&drow, (n + 1) * sizeof(long long)));
  CK(cudaMalloc(&dcol, nnz * sizeof(long long)));
  // The corrupt entry: at whatever distance the allocator put `halo` from `x`.
  col[3 * 500 - 1] = (halo - x) + 7;
  std::vector<float> hx(n);
  for (int i = 0; i < n; ++i) hx[i] = float(i % 9);
  CK(cudaMemcpy(x, hx.data(), n * sizeof(float), cudaMemcpyHostToDevice));
  CK(cudaMemset(halo, 0, n * sizeof(float)));
  CK(cudaMemcpy(dval, val.data(), nnz * sizeof(float), cudaMemcpyHostToDevice));
  CK(cudaMemcpy(drow, rowptr.data(), (n + 1) * sizeof(long long), cudaMemcpyHostToDevice));
  CK(cudaMemcpy(dcol, col.data(), nnz * sizeof(long long), cudaMemcpyHostToDevice));
  spmv<<<(n + 127) / 128, 128>>>(drow, dcol, dval, x, y, n);
  CK(cudaDeviceSynchronize());
  CK(cudaMemcpy(hx.data(), y, n * sizeof(float), cudaMemcpyDeviceToHost));
  double sum = 0;
  for (float v : hx) sum += v;
  std::printf("spmv: y[0]=%.1f y[500]=%.1f sum=%.1f\n", hx[0], hx[500], sum);
  CK(cudaFree(x));
  CK(cudaFree(halo));
  CK(cudaFree(y));
  CK(cudaFree(dval));
  CK(cudaFree(drow));
  CK(cudaFree(dcol));
  return 0;
}
