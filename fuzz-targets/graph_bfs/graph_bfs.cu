// Fuzz target: text edge list -> CSR on the host -> level-synchronous BFS on the GPU
// (one launch per level, vertex-parallel), then a histogram of the BFS levels.
//
// Input, one record a line:
//   # or % ...         comment; a line that starts with a letter ("nodes,edges",
//                      "src,dst") is a CSV column header and is skipped as well
//   N M  or  N,M       the first numeric line: node and edge counts
//   S D  or  S,D       a directed edge, 0 <= S, D < N (at most M of them); malformed
//                      lines and edges to nowhere are skipped
// The search starts at the first edge's source and stops after kMaxLevels levels.
//
// Planted bugs (-DCUSAFE_FIXED builds the fixed variant):
//  1. device, heap-buffer-overflow (atomic WRITE): the level histogram has kMaxLevels
//     (32) bins, but the vertices found by the last allowed level get level kMaxLevels,
//     one past the last bin. Needs a vertex at distance >= 32; the seeds' depths are at
//     most 31 (the chain seed: 40 junctions, a shortcut from 0 to 9: move or break it).
//  2. host, heap-buffer-overflow (WRITE): the edge count from the header sizes the edge
//     array and the loader never checks it while storing: a file with more edge lines
//     than the header says writes past the array. The seeds' headers announce a few
//     more edges than they list (fewer is fine): lower M by a digit.
#include <cusafe/fuzz.h>
#include <cuda_runtime.h>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <vector>

#include "../common/cuda_check.h"

constexpr unsigned kMaxNodes = 1u << 20;  // 4 MiB per vertex array on the device
constexpr unsigned kMaxEdges = 1u << 22;
constexpr int kMaxLevels = 32;
#ifdef CUSAFE_FIXED
constexpr int kBins = kMaxLevels + 1;     // levels 0 .. kMaxLevels
#else
constexpr int kBins = kMaxLevels;
#endif

__global__ void bfs_level(const int *rowptr, const int *col, int *level, int n, int cur,
                          int *changed) {
  const int v = blockIdx.x * blockDim.x + threadIdx.x;
  if (v >= n || level[v] != cur) return;
  for (int e = rowptr[v]; e < rowptr[v + 1]; ++e)
    if (atomicCAS(&level[col[e]], -1, cur + 1) == -1) *changed = 1;
}

__global__ void level_histogram(const int *level, int n, unsigned *hist) {
  const int v = blockIdx.x * blockDim.x + threadIdx.x;
  if (v >= n) return;
  const int l = level[v];
  if (l >= 0) atomicAdd(&hist[l], 1u); // cusafe-expect: heap-buffer-overflow
}

// Parses "A B", "A,B" or "A, B" (at most 9 digits each) filling a line; false otherwise.
static bool parse_pair(const char *p, const char *end, unsigned &a, unsigned &b) {
  unsigned *out[2] = {&a, &b};
  for (int k = 0; k < 2; ++k) {
    if (k == 1) {
      const char *q = p;
      while (p < end && (*p == ' ' || *p == '\t' || *p == ',')) ++p;
      if (p == q) return false;
    }
    if (p == end || *p < '0' || *p > '9') return false;
    unsigned v = 0;
    for (int digits = 0; p < end && *p >= '0' && *p <= '9'; ++p) {
      if (++digits > 9) return false;
      v = v * 10 + unsigned(*p - '0');
    }
    *out[k] = v;
  }
  while (p < end && (*p == ' ' || *p == '\t' || *p == '\r')) ++p;
  return p == end;
}

struct Edge {
  unsigned src, dst;
};

CUSAFE_FUZZ_TARGET(data, size) {
  const char *p = reinterpret_cast<const char *>(data), *end = p + size;
  unsigned n = 0, m = 0;
  bool have_header = false;
  std::vector<Edge> edges;
  size_t k = 0, skipped = 0;  // edges stored, lines skipped
  while (p < end) {
    const char *eol = static_cast<const char *>(std::memchr(p, '\n', size_t(end - p)));
    if (!eol) eol = end;
    const char *line = p;
    p = eol < end ? eol + 1 : end;
    while (line < eol && (*line == ' ' || *line == '\t')) ++line;
    if (line == eol || *line == '\r' || *line == '#' || *line == '%') continue;
    if ((*line | 0x20) >= 'a' && (*line | 0x20) <= 'z') continue;  // CSV column names
    unsigned a, b;
    const bool good = parse_pair(line, eol, a, b);
    if (!have_header) {
      // Every edge line takes at least 4 bytes: that bounds M by the input's size.
      if (!good || a == 0 || a > kMaxNodes || b == 0 || b > kMaxEdges || b > size / 4) return 0;
      n = a, m = b, have_header = true;
      edges.resize(m);
      continue;
    }
    if (!good || a >= n || b >= n) {  // a malformed line or a dangling edge
      ++skipped;
      continue;
    }
#ifdef CUSAFE_FIXED
    if (k == m) return 0;  // more edges than the header announced
#endif
    edges[k++] = Edge{a, b}; // asan-expect: heap-buffer-overflow
  }
  if (k == 0) return 0;

  // CSR, edges in file order within a row.
  std::vector<int> rowptr(n + 1, 0), col(k);
  for (size_t e = 0; e < k; ++e) ++rowptr[edges[e].src + 1];
  for (unsigned v = 0; v < n; ++v) rowptr[v + 1] += rowptr[v];
  std::vector<int> fill(rowptr.begin(), rowptr.end() - 1);
  for (size_t e = 0; e < k; ++e) col[fill[edges[e].src]++] = int(edges[e].dst);
  const unsigned source = edges[0].src;

  Dev<int> drow, dcol, dlevel, dchanged;
  Dev<unsigned> dhist;
  if (!drow.alloc(n + 1) || !dcol.alloc(k) || !dlevel.alloc(n) || !dchanged.alloc(1) ||
      !dhist.alloc(kBins))
    return 0;
  if (!CK(cudaMemcpy(drow.p, rowptr.data(), (n + 1) * sizeof(int), cudaMemcpyHostToDevice)) ||
      !CK(cudaMemcpy(dcol.p, col.data(), k * sizeof(int), cudaMemcpyHostToDevice)) ||
      !CK(cudaMemset(dlevel.p, 0xff, n * sizeof(int))) ||  // -1: not reached
      !CK(cudaMemset(dlevel.p + source, 0, sizeof(int))) ||
      !CK(cudaMemset(dhist.p, 0, kBins * sizeof(unsigned))))
    return 0;
  const int threads = 256, blocks = int((n + threads - 1) / threads);
  int depth = 0;
  for (int cur = 0; cur < kMaxLevels; ++cur) {
    int changed = 0;
    if (!CK(cudaMemset(dchanged.p, 0, sizeof(int)))) return 0;
    bfs_level<<<blocks, threads>>>(drow.p, dcol.p, dlevel.p, int(n), cur, dchanged.p);
    if (!CK(cudaGetLastError()) ||
        !CK(cudaMemcpy(&changed, dchanged.p, sizeof(int), cudaMemcpyDeviceToHost)))
      return 0;
    if (!changed) break;
    depth = cur + 1;
  }
  level_histogram<<<blocks, threads>>>(dlevel.p, int(n), dhist.p);
  unsigned hist[kBins];
  if (!CK(cudaGetLastError()) ||
      !CK(cudaMemcpy(hist, dhist.p, sizeof(hist), cudaMemcpyDeviceToHost)))
    return 0;
  unsigned reached = 0;
  for (int l = 0; l < kBins; ++l) reached += hist[l];
  std::printf("graph_bfs: %u nodes, %zu edges (%zu lines skipped), from %u: %u reached, depth %d, "
              "last level %u\n",
              n, k, skipped, source, reached, depth, hist[depth < kBins ? depth : kBins - 1]);
  return 0;
}
