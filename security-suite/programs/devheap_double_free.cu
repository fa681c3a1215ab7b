// Decodes delta-coded records, one per thread, into a staging buffer from the device
// heap, and checks each record's XOR checksum. A record that fails the check takes the
// error path, which frees the buffer early and marks the record bad, but then falls
// through to the common cleanup, which frees it again. Record 37's checksum is wrong.
// Bug: double-free (device heap), at the cleanup's free. The plain build's device heap
// may fault or be corrupted; the program prints a line before the launch.
#include "../../examples/common.h"
#include <vector>

__global__ void decode(const int *deltas, const int *start, const int *len, const int *check,
                       long long *sums, int nrec) {
  int r = blockIdx.x * blockDim.x + threadIdx.x;
  if (r >= nrec) return;
  int n = len[r];
  int *vals = static_cast<int *>(malloc(n * sizeof(int)));
  if (!vals) {
    sums[r] = -2;
    return;
  }
  int x = 0, sig = 0;
  for (int k = 0; k < n; ++k) {
    x += deltas[start[r] + k];
    vals[k] = x;
    sig ^= x;
  }
  bool ok = sig == check[r];
  if (!ok) { // corrupt record: give the buffer back early and flag the record
    free(vals);
    sums[r] = -1;
  }
  if (ok) {
    long long s = 0;
    for (int k = 0; k < n; ++k) s += vals[k];
    sums[r] = s;
  }
  free(vals); // cusafe-expect: double-free
}

int main() {
  const int nrec = 256;
  std::vector<int> start(nrec), len(nrec), check(nrec), deltas;
  for (int r = 0; r < nrec; ++r) {
    start[r] = int(deltas.size());
    len[r] = 8 + r % 24;
    int x = 0, sig = 0;
    for (int k = 0; k < len[r]; ++k) {
      int d = (r * 13 + k * 7) % 11 - 5;
      deltas.push_back(d);
      x += d;
      sig ^= x;
    }
    check[r] = r == 37 ? sig ^ 1 : sig; // record 37 arrives corrupted
  }
  int *dd, *ds, *dl, *dc;
  long long *sums;
  CK(cudaMalloc(&dd, deltas.size() * sizeof(int)));
  CK(cudaMalloc(&ds, nrec * sizeof(int)));
  CK(cudaMalloc(&dl, nrec * sizeof(int)));
  CK(cudaMalloc(&dc, nrec * sizeof(int)));
  CK(cudaMalloc(&sums, nrec * sizeof(long long)));
  CK(cudaMemcpy(dd, deltas.data(), deltas.size() * sizeof(int), cudaMemcpyHostToDevice));
  CK(cudaMemcpy(ds, start.data(), nrec * sizeof(int), cudaMemcpyHostToDevice));
  CK(cudaMemcpy(dl, len.data(), nrec * sizeof(int), cudaMemcpyHostToDevice));
  CK(cudaMemcpy(dc, check.data(), nrec * sizeof(int), cudaMemcpyHostToDevice));
  std::printf("decoding %d records\n", nrec);
  decode<<<nrec / 64, 64>>>(dd, ds, dl, dc, sums, nrec);
  cudaError_t err = cudaDeviceSynchronize();
  std::printf("decode: %s\n", cudaGetErrorString(err));
  if (err != cudaSuccess) return 0; // the context is lost after a fault
  std::vector<long long> s(nrec);
  CK(cudaMemcpy(s.data(), sums, nrec * sizeof(long long), cudaMemcpyDeviceToHost));
  long long total = 0;
  int bad = 0;
  for (long long v : s)
    if (v < 0)
      ++bad;
    else
      total += v;
  std::printf("%d bad records, sum of the good ones %lld\n", bad, total);
  CK(cudaFree(dd));
  CK(cudaFree(ds));
  CK(cudaFree(dl));
  CK(cudaFree(dc));
  CK(cudaFree(sums));
  return 0;
}
