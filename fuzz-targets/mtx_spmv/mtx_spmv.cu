// Fuzz target: Matrix Market coordinate reader -> CSR on the host -> y = A x on the GPU
// (one thread per row), x[c] = 1 + (c % 7) / 4.
//
// Input:
//   %%MatrixMarket matrix coordinate real|integer|pattern general|symmetric|skew-symmetric
//   % comments
//   M N NNZ
//   i j [v]      NNZ entries, 1-based (symmetric: the mirror of each off-diagonal one
//                is added; skew-symmetric: with the opposite sign)
//
// Planted bugs (-DCUSAFE_FIXED builds the fixed variant):
//  1. device, heap-buffer-overflow (READ): the column index is checked against the row
//     count M instead of the column count N, so in a matrix with more rows than columns
//     a column in (N, M] reads past x. The 8x4 seed's columns are <= 4: raise one.
//  2. host, heap-buffer-overflow (WRITE): the row index has no lower bound, so row 0
//     becomes row -1 and the row count goes to rowlen[-1]. Every seed has a row 1.
#include <cusafe/fuzz.h>
#include <cuda_runtime.h>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

#include "../common/cuda_check.h"

constexpr long long kMaxDim = 1 << 20, kMaxNnz = 1 << 22;

__global__ void spmv_csr(const int *rowptr, const int *col, const float *val, const float *x,
                         float *y, int rows) {
  const int r = blockIdx.x * blockDim.x + threadIdx.x;
  if (r >= rows) return;
  float acc = 0;
  for (int k = rowptr[r]; k < rowptr[r + 1]; ++k)
    acc += val[k] * x[col[k]]; // cusafe-expect: heap-buffer-overflow
  y[r] = acc;
}

// Splits a line at blanks into at most `max` tokens; false if there are more.
static bool split(std::string_view line, std::string_view *tok, int max, int &n) {
  n = 0;
  size_t i = 0;
  while (true) {
    while (i < line.size() && (line[i] == ' ' || line[i] == '\t' || line[i] == '\r')) ++i;
    if (i == line.size()) return true;
    size_t j = i;
    while (j < line.size() && line[j] != ' ' && line[j] != '\t' && line[j] != '\r') ++j;
    if (n == max) return false;
    tok[n++] = line.substr(i, j - i);
    i = j;
  }
}

static bool same(std::string_view a, const char *b) {  // ASCII case-insensitive
  if (a.size() != std::strlen(b)) return false;
  for (size_t i = 0; i < a.size(); ++i)
    if ((a[i] | 0x20) != b[i]) return false;
  return true;
}

static bool integer(std::string_view t, long long &v) {
  if (t.empty() || t.size() > 9) return false;
  v = 0;
  for (char c : t) {
    if (c < '0' || c > '9') return false;
    v = v * 10 + (c - '0');
  }
  return true;
}

static bool real(std::string_view t, float &v) {
  if (t.size() > 64) return false;
  const std::string s(t);
  char *stop = nullptr;
  v = std::strtof(s.c_str(), &stop);
  return stop == s.c_str() + s.size();
}

CUSAFE_FUZZ_TARGET(data, size) {
  const std::string_view text(reinterpret_cast<const char *>(data), size);
  size_t pos = 0;
  auto next_line = [&](std::string_view &line) {
    if (pos >= text.size()) return false;
    size_t eol = text.find('\n', pos);
    if (eol == std::string_view::npos) eol = text.size();
    line = text.substr(pos, eol - pos);
    pos = eol + 1;
    return true;
  };
  std::string_view line, tok[8];
  int n;
  if (!next_line(line) || !split(line, tok, 8, n) || n != 5 || tok[0] != "%%MatrixMarket" ||
      !same(tok[1], "matrix") || !same(tok[2], "coordinate"))
    return 0;
  const bool pattern = same(tok[3], "pattern");
  if (!pattern && !same(tok[3], "real") && !same(tok[3], "integer")) return 0;
  const bool skew = same(tok[4], "skew-symmetric"), sym = skew || same(tok[4], "symmetric");
  if (!sym && !same(tok[4], "general")) return 0;

  long long M = 0, N = 0, nnz = -1;
  std::vector<int> rows, cols;
  std::vector<float> vals;
  while (next_line(line)) {
    if (!split(line, tok, 8, n)) return 0;
    if (n == 0 || tok[0][0] == '%') continue;
    if (nnz < 0) {  // the size line
      if (n != 3 || !integer(tok[0], M) || !integer(tok[1], N) || !integer(tok[2], nnz)) return 0;
      if (M < 1 || N < 1 || M > kMaxDim || N > kMaxDim || nnz < 1 || nnz > kMaxNnz ||
          size_t(nnz) > size / 4 || (sym && M != N))
        return 0;
      rows.reserve(size_t(nnz) * (sym ? 2 : 1));
      cols.reserve(rows.capacity()), vals.reserve(rows.capacity());
      continue;
    }
    long long i, j;
    float v = 1;
    if (n != (pattern ? 2 : 3) || !integer(tok[0], i) || !integer(tok[1], j)) return 0;
    if (!pattern && !real(tok[2], v)) return 0;
#ifdef CUSAFE_FIXED
    if (i < 1 || i > M || j < 1 || j > N) return 0;
#else
    if (i > M) return 0;           // no lower bound: row 0 passes
    if (j < 1 || j > M) return 0;  // the column checked against the row count
#endif
    rows.push_back(int(i - 1)), cols.push_back(int(j - 1)), vals.push_back(v);
    if (sym && i != j)
      rows.push_back(int(j - 1)), cols.push_back(int(i - 1)), vals.push_back(skew ? -v : v);
    if (--nnz == 0) break;  // entries after the last one are ignored
  }
  if (nnz != 0) return 0;  // no size line, or fewer entries than it announced

  // CSR: count per row, prefix sum, fill.
  const size_t E = rows.size();
  std::vector<int> rowlen(M, 0), rowptr(M + 1, 0), col(E);
  std::vector<float> val(E);
  for (size_t e = 0; e < E; ++e) ++rowlen[rows[e]]; // asan-expect: heap-buffer-overflow
  for (long long r = 0; r < M; ++r) rowptr[r + 1] = rowptr[r] + rowlen[r];
  std::vector<int> fill(rowptr.begin(), rowptr.end() - 1);
  for (size_t e = 0; e < E; ++e) {
    const int k = fill[rows[e]]++;
    col[k] = cols[e], val[k] = vals[e];
  }
  std::vector<float> x(N);
  for (long long c = 0; c < N; ++c) x[c] = 1 + float(c % 7) / 4;

  Dev<int> drow, dcol;
  Dev<float> dval, dx, dy;
  if (!drow.alloc(M + 1) || !dcol.alloc(E) || !dval.alloc(E) || !dx.alloc(N) || !dy.alloc(M))
    return 0;
  if (!CK(cudaMemcpy(drow.p, rowptr.data(), (M + 1) * sizeof(int), cudaMemcpyHostToDevice)) ||
      !CK(cudaMemcpy(dcol.p, col.data(), E * sizeof(int), cudaMemcpyHostToDevice)) ||
      !CK(cudaMemcpy(dval.p, val.data(), E * sizeof(float), cudaMemcpyHostToDevice)) ||
      !CK(cudaMemcpy(dx.p, x.data(), N * sizeof(float), cudaMemcpyHostToDevice)))
    return 0;
  spmv_csr<<<int((M + 127) / 128), 128>>>(drow.p, dcol.p, dval.p, dx.p, dy.p, int(M));
  if (!CK(cudaGetLastError()) || !CK(cudaDeviceSynchronize())) return 0;
  std::vector<float> y(M);
  if (!CK(cudaMemcpy(y.data(), dy.p, M * sizeof(float), cudaMemcpyDeviceToHost))) return 0;
  double sum = 0;
  for (float v : y) sum += v;
  std::printf("mtx_spmv: %lldx%lld, %zu stored entries: sum(y) = %.4f, y[0] = %.4f\n", M, N, E,
              sum, double(y[0]));
  return 0;
}
