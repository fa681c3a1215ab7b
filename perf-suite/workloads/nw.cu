// ~5.5 ms per pass on H100 (measured): 8192x8192 alignment, 1023 wavefront launches of 16-thread tile blocks (latency bound); 5 passes ~ 27 ms
// Rodinia nw: Needleman-Wunsch global sequence alignment. The score matrix is processed in
// 16x16 tiles along anti-diagonals of tiles (kernel 1 for the upper-left half, kernel 2
// for the lower-right half); each 16-thread block loads its tile's substitution scores and
// the north/west borders into shared memory and sweeps the tile's own anti-diagonals.
// Every interior cell is rewritten each pass from the fixed first row/column, so passes
// are identical and the CPU reference runs once.
#include "../harness.h"

#include <vector>

namespace {

constexpr int BS = 16;

__device__ __forceinline__ int maximum(int a, int b, int c) {
  int k = a > b ? a : b;
  return k > c ? k : c;
}

__device__ __forceinline__ void nw_tile(const int *reference, int *matrix, int cols, int penalty,
                                        int b_index_x, int b_index_y) {
  __shared__ int temp[BS + 1][BS + 1];
  __shared__ int ref[BS][BS];
  int tx = threadIdx.x;
  size_t index_nw = (size_t)cols * BS * b_index_y + (size_t)BS * b_index_x;
  size_t index = index_nw + cols + 1 + tx;
  size_t index_n = index_nw + 1 + tx;
  size_t index_w = index_nw + cols;

  if (tx == 0) temp[0][0] = matrix[index_nw];
  for (int ty = 0; ty < BS; ty++) ref[ty][tx] = reference[index + (size_t)cols * ty];
  temp[tx + 1][0] = matrix[index_w + (size_t)cols * tx];
  temp[0][tx + 1] = matrix[index_n];
  __syncthreads();

  // Upper-left triangle of the tile, one anti-diagonal per step.
  for (int m = 0; m < BS; m++) {
    if (tx <= m) {
      int x = tx + 1, y = m - tx + 1;
      temp[y][x] = maximum(temp[y - 1][x - 1] + ref[y - 1][x - 1], temp[y][x - 1] - penalty,
                           temp[y - 1][x] - penalty);
    }
    __syncthreads();
  }
  // Lower-right triangle.
  for (int m = BS - 2; m >= 0; m--) {
    if (tx <= m) {
      int x = tx + BS - m, y = BS - tx;
      temp[y][x] = maximum(temp[y - 1][x - 1] + ref[y - 1][x - 1], temp[y][x - 1] - penalty,
                           temp[y - 1][x] - penalty);
    }
    __syncthreads();
  }
  for (int ty = 0; ty < BS; ty++) matrix[index + (size_t)cols * ty] = temp[ty + 1][tx + 1];
}

// Tile anti-diagonal i-1 (i = 1 .. block_width): tiles (bx, i-1-bx).
__global__ void needle_1(const int *reference, int *matrix, int cols, int penalty, int i) {
  int bx = blockIdx.x;
  nw_tile(reference, matrix, cols, penalty, bx, i - 1 - bx);
}

// Tile anti-diagonal 2*block_width-1-i (i = block_width-1 .. 1).
__global__ void needle_2(const int *reference, int *matrix, int cols, int penalty, int i,
                         int block_width) {
  int bx = blockIdx.x;
  nw_tile(reference, matrix, cols, penalty, bx + block_width - i, block_width - bx - 1);
}

} // namespace

int main(int argc, char **argv) {
  perf::Run run(argc, argv, "nw", 5);
  const int len = 8192; // sequence length, a multiple of BS
  const int cols = len + 1, rows = len + 1;
  const int penalty = 10;
  const int block_width = len / BS;
  const size_t n = (size_t)rows * cols;

  // A symmetric BLOSUM-like substitution table over 24 residues (positive diagonal,
  // mostly negative off-diagonal), and two random sequences.
  int table[24][24];
  {
    perf::Rng rng(71);
    for (int a = 0; a < 24; a++)
      for (int b = 0; b <= a; b++) {
        int v = a == b ? 4 + (int)rng.below(8) : -4 + (int)rng.below(8);
        table[a][b] = table[b][a] = v;
      }
  }
  std::vector<int> seq1(rows), seq2(cols);
  {
    perf::Rng rng(72);
    for (auto &s : seq1) s = 1 + (int)rng.below(23);
    for (auto &s : seq2) s = 1 + (int)rng.below(23);
  }
  std::vector<int> reference(n, 0), matrix(n, 0);
  for (int i = 1; i < rows; i++)
    for (int j = 1; j < cols; j++) reference[(size_t)i * cols + j] = table[seq1[i]][seq2[j]];
  for (int i = 0; i < rows; i++) matrix[(size_t)i * cols] = -i * penalty;
  for (int j = 0; j < cols; j++) matrix[j] = -j * penalty;

  int *d_ref, *d_mat;
  CK(cudaMalloc(&d_ref, n * sizeof(int)));
  CK(cudaMalloc(&d_mat, n * sizeof(int)));
  CK(cudaMemcpy(d_ref, reference.data(), n * sizeof(int), cudaMemcpyHostToDevice));
  CK(cudaMemcpy(d_mat, matrix.data(), n * sizeof(int), cudaMemcpyHostToDevice));

  auto pass = [&] {
    for (int i = 1; i <= block_width; i++)
      needle_1<<<i, BS>>>(d_ref, d_mat, cols, penalty, i);
    for (int i = block_width - 1; i >= 1; i--)
      needle_2<<<i, BS>>>(d_ref, d_mat, cols, penalty, i, block_width);
  };
  run.warmup(pass);
  run.time(pass);

  std::vector<int> out(n);
  CK(cudaMemcpy(out.data(), d_mat, n * sizeof(int), cudaMemcpyDeviceToHost));

  // CPU reference: the plain DP, row by row.
  for (int i = 1; i < rows; i++) {
    int *cur = &matrix[(size_t)i * cols];
    const int *up = &matrix[(size_t)(i - 1) * cols];
    const int *rf = &reference[(size_t)i * cols];
    for (int j = 1; j < cols; j++) {
      int a = up[j - 1] + rf[j], b = cur[j - 1] - penalty, c = up[j] - penalty;
      int k = a > b ? a : b;
      cur[j] = k > c ? k : c;
    }
  }
  size_t bad = 0;
  for (size_t k = 0; k < n; k++) {
    if (out[k] != matrix[k]) {
      if (bad < 5)
        std::fprintf(stderr, "score[%zu][%zu]: got %d, want %d\n", k / cols, k % cols, out[k],
                     matrix[k]);
      bad++;
    }
  }
  if (bad) std::fprintf(stderr, "nw: %zu of %zu scores differ\n", bad, n);

  // Checksum the last row and last column (where the traceback starts).
  std::vector<int> edge(out.end() - cols, out.end());
  for (int i = 0; i < rows; i++) edge.push_back(out[(size_t)i * cols + cols - 1]);

  CK(cudaFree(d_ref));
  CK(cudaFree(d_mat));
  return run.finish(bad == 0, perf::checksum(edge));
}
