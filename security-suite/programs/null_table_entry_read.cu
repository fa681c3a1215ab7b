// Per-row maxima of a ragged batch of score rows. The host allocates one device buffer
// per row and uploads the table of row pointers, but skips the allocation of empty rows
// and leaves their entries null. The kernel seeds each row's maximum with row[0] before
// its loop: the threads of the empty rows (0 and 50) load a null entry from the table
// and read through it at address 0. Bug: null-dereference, READ (pointer loaded from
// device memory). The plain build stops the launch with an illegal-address error; the
// program prints a line before it.
#include "../../examples/common.h"
#include <vector>

__global__ void row_max(float *const *rows, const int *lens, float *out, int nrows) {
  int r = blockIdx.x * blockDim.x + threadIdx.x;
  if (r >= nrows) return;
  const float *row = rows[r];
  float m = row[0]; // cusafe-expect: null-dereference
  for (int c = 1; c < lens[r]; ++c) m = fmaxf(m, row[c]);
  out[r] = m;
}

int main() {
  const int nrows = 64;
  std::vector<int> lens(nrows);
  std::vector<float *> rp(nrows, nullptr);
  for (int r = 0; r < nrows; ++r) {
    lens[r] = (r * 29) % 50; // rows 0 and 50 are empty
    if (lens[r] == 0) continue; // nothing to upload: the entry stays null
    std::vector<float> h(lens[r]);
    for (int c = 0; c < lens[r]; ++c) h[c] = float((r * 7 + c * 13) % 101);
    CK(cudaMalloc(&rp[r], lens[r] * sizeof(float)));
    CK(cudaMemcpy(rp[r], h.data(), lens[r] * sizeof(float), cudaMemcpyHostToDevice));
  }
  float **rows, *out;
  int *dlens;
  CK(cudaMalloc(&rows, nrows * sizeof(float *)));
  CK(cudaMalloc(&dlens, nrows * sizeof(int)));
  CK(cudaMalloc(&out, nrows * sizeof(float)));
  CK(cudaMemcpy(rows, rp.data(), nrows * sizeof(float *), cudaMemcpyHostToDevice));
  CK(cudaMemcpy(dlens, lens.data(), nrows * sizeof(int), cudaMemcpyHostToDevice));
  std::printf("row maxima of %d rows\n", nrows);
  row_max<<<1, nrows>>>(rows, dlens, out, nrows);
  cudaError_t err = cudaDeviceSynchronize();
  std::printf("row_max: %s\n", cudaGetErrorString(err));
  if (err != cudaSuccess) return 0; // the context is lost after a fault
  std::vector<float> m(nrows);
  CK(cudaMemcpy(m.data(), out, nrows * sizeof(float), cudaMemcpyDeviceToHost));
  std::printf("max[1]=%.0f max[63]=%.0f\n", m[1], m[63]);
  for (float *p : rp)
    if (p) CK(cudaFree(p));
  CK(cudaFree(rows));
  CK(cudaFree(dlens));
  CK(cudaFree(out));
  return 0;
}
