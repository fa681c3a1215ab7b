// Correct: allocation extremes.
// - one 3 GiB buffer (far beyond one 2 MiB page), written at its first and last
//   elements and sampled every 64 MiB by a kernel, with a 64-bit index;
// - 4096 small buffers alive at once (sizes 4 B .. 16 KiB), their pointers in a
//   device array, each filled and summed by its own thread;
// - 5000 allocate/use/free rounds of varying sizes.
#include "../../examples/common.h"
#include <vector>

__global__ void touch_big(unsigned char *big, size_t bytes, size_t stride, unsigned long long *sum) {
  size_t i = (blockIdx.x * (size_t)blockDim.x + threadIdx.x) * stride;
  if (i < bytes) atomicAdd(sum, (unsigned long long)big[i]);
  if (blockIdx.x == 0 && threadIdx.x == 0) {
    big[0] = 1;
    big[bytes - 1] = 2;
  }
}

__global__ void fill_many(int *const *bufs, const int *counts, int nbufs, long long *sums) {
  int b = blockIdx.x * blockDim.x + threadIdx.x;
  if (b >= nbufs) return;
  int *p = bufs[b];
  long long s = 0;
  for (int k = 0; k < counts[b]; ++k) {
    p[k] = b + k;
    s += p[k];
  }
  sums[b] = s;
}

int main() {
  const size_t big_bytes = 3ull << 30, stride = 64ull << 20;
  unsigned char *big;
  unsigned long long *sum;
  CK(cudaMalloc(&big, big_bytes));
  CK(cudaMalloc(&sum, sizeof *sum));
  CK(cudaMemset(big, 3, big_bytes));
  CK(cudaMemset(sum, 0, sizeof *sum));
  touch_big<<<(unsigned)(big_bytes / stride + 255) / 256, 256>>>(big, big_bytes, stride, sum);
  unsigned char ends[2];
  unsigned long long s = 0;
  CK(cudaMemcpy(&ends[0], big, 1, cudaMemcpyDeviceToHost));
  CK(cudaMemcpy(&ends[1], big + big_bytes - 1, 1, cudaMemcpyDeviceToHost));
  CK(cudaMemcpy(&s, sum, sizeof s, cudaMemcpyDeviceToHost));
  std::printf("big: ends %d %d, sampled sum %llu\n", ends[0], ends[1], s);
  CK(cudaFree(big));
  CK(cudaFree(sum));

  const int nbufs = 4096;
  std::vector<int *> bufs(nbufs);
  std::vector<int> counts(nbufs);
  for (int b = 0; b < nbufs; ++b) {
    counts[b] = 1 + (b * 97) % 4096;
    CK(cudaMalloc(&bufs[b], counts[b] * sizeof(int)));
  }
  int **dbufs, *dcounts;
  long long *sums;
  CK(cudaMalloc(&dbufs, nbufs * sizeof(int *)));
  CK(cudaMalloc(&dcounts, nbufs * sizeof(int)));
  CK(cudaMalloc(&sums, nbufs * sizeof(long long)));
  CK(cudaMemcpy(dbufs, bufs.data(), nbufs * sizeof(int *), cudaMemcpyHostToDevice));
  CK(cudaMemcpy(dcounts, counts.data(), nbufs * sizeof(int), cudaMemcpyHostToDevice));
  fill_many<<<nbufs / 128, 128>>>(dbufs, dcounts, nbufs, sums);
  std::vector<long long> hs(nbufs);
  CK(cudaMemcpy(hs.data(), sums, nbufs * sizeof(long long), cudaMemcpyDeviceToHost));
  long long total = 0;
  for (long long v : hs) total += v;
  std::printf("many: %d buffers, total %lld\n", nbufs, total);
  for (int *p : bufs) CK(cudaFree(p));
  CK(cudaFree(dbufs));
  CK(cudaFree(dcounts));
  CK(cudaFree(sums));

  for (int round = 0; round < 5000; ++round) {
    size_t bytes = 16 + (size_t)(round * 7919 % 5000) * 64;
    void *p;
    CK(cudaMalloc(&p, bytes));
    CK(cudaMemset(p, round & 0xff, bytes));
    CK(cudaFree(p));
  }
  std::printf("churn: 5000 rounds ok\n");
  return 0;
}
