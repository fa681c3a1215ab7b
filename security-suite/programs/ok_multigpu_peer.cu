// Correct: two GPUs with peer access both ways. Kernels on each device read the other
// device's buffer in place — up to its last element, through a [begin, end) pair whose
// end is one past that last element — and write their own; cudaMemcpyPeer,
// cudaMemcpyPeerAsync and cudaMemcpy (cudaMemcpyDefault, device to device across GPUs)
// copy whole buffers and sub-ranges that end exactly at a buffer's end. Every result
// is checked on the host.
// Needs 2 GPUs with peer access: otherwise it prints "skipped: ..." and exits 77.
#include "../../examples/common.h"
#include <vector>

static void need_gpus(int want) {
  int n = 0;
  if (cudaGetDeviceCount(&n) != cudaSuccess) n = 0;
  if (n < want) {
    std::printf("skipped: needs %d GPUs, found %d\n", want, n);
    std::exit(77);
  }
}

// out[i] = mine[i] + (sum of the peer's elements in [begin, end)) for i < n.
__global__ void add_peer_total(const int *mine, const int *begin, const int *end, int *out, int n) {
  __shared__ int total;
  if (threadIdx.x == 0) {
    int s = 0;
    for (const int *p = begin; p != end; ++p) s += *p;
    total = s;
  }
  __syncthreads();
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = mine[i] + total;
}

// out[i] = peer[n - 1 - i]: the peer's buffer reversed, its last element included.
__global__ void reverse_from_peer(const int *peer, int *out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = peer[n - 1 - i];
}

int main() {
  need_gpus(2);
  int ok01 = 0, ok10 = 0;
  CK(cudaDeviceCanAccessPeer(&ok01, 0, 1));
  CK(cudaDeviceCanAccessPeer(&ok10, 1, 0));
  if (!ok01 || !ok10) {
    std::printf("skipped: devices 0 and 1 cannot access each other's memory (no peer access)\n");
    return 77;
  }
  const int n = 1000, m = 37; // odd sizes: ends inside cudaMalloc's rounding
  std::vector<int> h0(n), h1(n), got(n);
  for (int i = 0; i < n; ++i) {
    h0[i] = i % 13;
    h1[i] = 100 + i % 7;
  }
  int *a[2], *b[2], *small[2];
  cudaStream_t st[2];
  for (int d = 0; d < 2; ++d) {
    CK(cudaSetDevice(d));
    CK(cudaDeviceEnablePeerAccess(1 - d, 0));
    CK(cudaStreamCreate(&st[d]));
    CK(cudaMalloc(&a[d], n * sizeof(int)));
    CK(cudaMalloc(&b[d], n * sizeof(int)));
    CK(cudaMalloc(&small[d], m * sizeof(int)));
    CK(cudaMemcpy(a[d], d ? h1.data() : h0.data(), n * sizeof(int), cudaMemcpyHostToDevice));
  }
  long long t0 = 0, t1 = 0;
  for (int i = 0; i < n; ++i) t0 += h0[i], t1 += h1[i];
  bool ok = true;

  // 1. Each device adds the other's whole total, read in place through peer access.
  for (int d = 0; d < 2; ++d) {
    CK(cudaSetDevice(d));
    add_peer_total<<<(n + 255) / 256, 256, 0, st[d]>>>(a[d], a[1 - d], a[1 - d] + n, b[d], n);
    CK(cudaGetLastError());
  }
  for (int d = 0; d < 2; ++d) {
    CK(cudaSetDevice(d));
    CK(cudaStreamSynchronize(st[d]));
    CK(cudaMemcpy(got.data(), b[d], n * sizeof(int), cudaMemcpyDeviceToHost));
    for (int i = 0; i < n; ++i) ok = ok && got[i] == (d ? h1[i] + t0 : h0[i] + t1);
  }
  std::printf("peer totals: %lld and %lld\n", t1, t0);

  // 2. Device 1 reverses device 0's buffer into its own, reading device 0's last element.
  CK(cudaSetDevice(1));
  reverse_from_peer<<<(n + 255) / 256, 256>>>(a[0], b[1], n);
  CK(cudaGetLastError());
  CK(cudaDeviceSynchronize());
  CK(cudaMemcpy(got.data(), b[1], n * sizeof(int), cudaMemcpyDeviceToHost));
  for (int i = 0; i < n; ++i) ok = ok && got[i] == h0[n - 1 - i];
  std::printf("reversed: first %d, last %d\n", got[0], got[n - 1]);

  // 3. Copies: whole buffers with cudaMemcpyPeer, the tail m elements with
  // cudaMemcpyPeerAsync (ending at the end of both), and cudaMemcpy (default kind)
  // across devices.
  CK(cudaMemcpyPeer(b[0], 0, a[1], 1, n * sizeof(int)));
  CK(cudaMemcpyPeerAsync(small[1], 1, a[0] + (n - m), 0, m * sizeof(int), st[1]));
  CK(cudaStreamSynchronize(st[1]));
  CK(cudaSetDevice(0));
  CK(cudaMemcpy(small[0], small[1], m * sizeof(int), cudaMemcpyDefault));
  CK(cudaMemcpy(got.data(), b[0], n * sizeof(int), cudaMemcpyDeviceToHost));
  for (int i = 0; i < n; ++i) ok = ok && got[i] == h1[i];
  CK(cudaMemcpy(got.data(), small[0], m * sizeof(int), cudaMemcpyDeviceToHost));
  long long tail = 0;
  for (int i = 0; i < m; ++i) {
    ok = ok && got[i] == h0[n - m + i];
    tail += got[i];
  }
  std::printf("copies: tail of %d elements sums to %lld\n", m, tail);

  for (int d = 0; d < 2; ++d) {
    CK(cudaSetDevice(d));
    CK(cudaFree(a[d]));
    CK(cudaFree(b[d]));
    CK(cudaFree(small[d]));
    CK(cudaStreamDestroy(st[d]));
    CK(cudaDeviceDisablePeerAccess(1 - d));
  }
  std::printf("%s\n", ok ? "all results correct" : "WRONG RESULTS");
  return ok ? 0 : 1;
}
