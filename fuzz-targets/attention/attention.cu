// Fuzz target: a binary header of integers drives multi-head attention on the GPU,
// O = softmax(Q K^T / sqrt(d) + bias) V, one block per query row, K and V staged in
// shared-memory tiles, softmax computed online tile by tile. Q, K and V are generated
// on the device from the header's seed.
//
// Input (little-endian):
//   "ATTN", u16 batch, u16 heads, u16 seq_len, u16 head_dim, u16 flags, u16 n_lens,
//   u32 seed, u32 reserved                                                  (24 bytes)
//   n_lens x u16: valid keys per batch item (key padding; 0 or absent: all seq_len)
//   if flags & 2: heads x f32 ALiBi slopes (bias -slope * |i - j|)
//   flags & 1: causal mask
//
// Planted bugs (-DCUSAFE_FIXED builds the fixed variant):
//  1. device, shared-buffer-overflow (WRITE, then READ): the host accepts head_dim up to
//     kMaxHeadDim (128), but the kernel's query tile was sized for 64: head_dim 65..128
//     stores past q_s (and the dot product reads past it). Seeds: head_dim 16, 32, 64.
//  2. device, heap-buffer-overflow (READ): valid-key counts are trusted, so a count
//     above seq_len in the last batch item (without the causal mask) stages K and V rows
//     past the tensors. Seeds' counts are <= seq_len.
//  3. host, heap-buffer-overflow (WRITE): n_lens is trusted when the counts are copied
//     into the batch-sized array; the seeds with slopes have bytes after the counts, so
//     n_lens + 1 is enough.
#include <cusafe/fuzz.h>
#include <cuda_runtime.h>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <vector>

#include "../common/cuda_check.h"

constexpr int kMaxSeq = 256, kMaxHeadDim = 128, kThreads = 128;
#ifdef CUSAFE_FIXED
constexpr int kQDim = kMaxHeadDim;
#else
constexpr int kQDim = 64;  // the head size the kernel was first written for
#endif
constexpr int kTileFloats = 2048, kMaxTileKeys = 64;  // a tile: min(2048 / d, 64) keys
constexpr size_t kMaxElems = size_t(1) << 21;        // per tensor: Q, K, V, O <= 32 MiB
constexpr size_t kMaxRows = size_t(1) << 15;

__global__ void fill(float *q, size_t n, uint32_t seed) {
  const size_t i = size_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= n) return;
  uint32_t x = uint32_t(i) * 2654435761u ^ seed ^ uint32_t(i >> 32) * 0x85ebca6bu;
  x ^= x >> 16, x *= 0x7feb352du, x ^= x >> 15;
  q[i] = float(x & 0xffff) * (2.0f / 65535) - 1.0f;
}

// Block = one query row i of one (batch b, head h); thread t owns output element t.
__global__ void attention(const float *Q, const float *K, const float *V, float *O,
                          const uint16_t *lens, const float *slopes, int heads, int seq,
                          int hd, int causal) {
  __shared__ float q_s[kQDim];
  __shared__ float k_s[kTileFloats], v_s[kTileFloats], p_s[kMaxTileKeys];
  const int row = blockIdx.x, t = threadIdx.x;
  const int i = row % seq, bh = row / seq, b = bh / heads, h = bh % heads;
  const size_t base = size_t(bh) * seq * hd;  // this (b, h)'s [seq x hd] slice
  if (t < hd) q_s[t] = Q[base + size_t(i) * hd + t] * rsqrtf(float(hd)); // cusafe-expect: shared-buffer-overflow
  int nkeys = lens[b] ? lens[b] : seq;
  if (causal) nkeys = min(nkeys, i + 1);
  const int kt = min(kTileFloats / hd, kMaxTileKeys);
  const float slope = slopes[h];
  float m = -INFINITY, l = 0, acc = 0;  // running max, running sum, output element t
  for (int k0 = 0; k0 < nkeys; k0 += kt) {
    const int n = min(kt, nkeys - k0);
    for (int e = t; e < n * hd; e += kThreads) {
      const size_t g = base + size_t(k0) * hd + e;
      k_s[e] = K[g], v_s[e] = V[g]; // cusafe-expect: heap-buffer-overflow
    }
    __syncthreads();
    if (t < n) {
      float s = 0;
      for (int d = 0; d < hd; ++d) s += q_s[d] * k_s[t * hd + d]; // cusafe-expect: shared-buffer-overflow
      p_s[t] = s - slope * float(abs(i - (k0 + t)));
    }
    __syncthreads();
    float tmax = m;
    for (int j = 0; j < n; ++j) tmax = fmaxf(tmax, p_s[j]);
    const float rescale = __expf(m - tmax);
    l *= rescale, acc *= rescale;
    for (int j = 0; j < n; ++j) {
      const float pj = __expf(p_s[j] - tmax);
      l += pj;
      if (t < hd) acc += pj * v_s[j * hd + t];
    }
    m = tmax;
    __syncthreads();  // before the next tile overwrites k_s, v_s and p_s
  }
  if (t < hd) O[base + size_t(i) * hd + t] = l > 0 ? acc / l : 0.0f;
}

static unsigned u16(const uint8_t *p) { return p[0] | unsigned(p[1]) << 8; }

CUSAFE_FUZZ_TARGET(data, size) {
  if (size < 24 || std::memcmp(data, "ATTN", 4) != 0) return 0;
  const unsigned batch = u16(data + 4), heads = u16(data + 6), seq = u16(data + 8),
                 hd = u16(data + 10), flags = u16(data + 12), n_lens = u16(data + 14);
  uint32_t seed;
  std::memcpy(&seed, data + 16, 4);
  if (batch == 0 || heads == 0 || seq == 0 || hd == 0 || seq > kMaxSeq || hd > kMaxHeadDim)
    return 0;
  const size_t rows = size_t(batch) * heads * seq, elems = rows * hd;
  if (rows > kMaxRows || elems > kMaxElems) return 0;
  const uint8_t *p = data + 24, *end = data + size;
  if (size_t(end - p) < size_t(n_lens) * 2) return 0;
  std::vector<uint16_t> lens(batch, 0);
#ifdef CUSAFE_FIXED
  if (n_lens > batch) return 0;
#endif
  std::memcpy(lens.data(), p, size_t(n_lens) * 2); // asan-expect: heap-buffer-overflow
  p += size_t(n_lens) * 2;
#ifdef CUSAFE_FIXED
  for (uint16_t n : lens)
    if (n > seq) return 0;
#endif
  std::vector<float> slopes(heads, 0.0f);
  if (flags & 2) {
    if (size_t(end - p) < size_t(heads) * 4) return 0;
    std::memcpy(slopes.data(), p, size_t(heads) * 4);
  }

  Dev<float> q, k, v, o, dslopes;
  Dev<uint16_t> dlens;
  if (!q.alloc(elems) || !k.alloc(elems) || !v.alloc(elems) || !o.alloc(elems) ||
      !dslopes.alloc(heads) || !dlens.alloc(batch))
    return 0;
  if (!CK(cudaMemcpy(dlens.p, lens.data(), batch * sizeof(uint16_t), cudaMemcpyHostToDevice)) ||
      !CK(cudaMemcpy(dslopes.p, slopes.data(), heads * sizeof(float), cudaMemcpyHostToDevice)))
    return 0;
  const int fb = int((elems + 255) / 256);
  fill<<<fb, 256>>>(q.p, elems, seed);
  fill<<<fb, 256>>>(k.p, elems, seed ^ 0x1234567u);
  fill<<<fb, 256>>>(v.p, elems, seed ^ 0x7654321u);
  attention<<<int(rows), kThreads>>>(q.p, k.p, v.p, o.p, dlens.p, dslopes.p, int(heads),
                                     int(seq), int(hd), int(flags & 1));
  if (!CK(cudaGetLastError()) || !CK(cudaDeviceSynchronize())) return 0;
  std::vector<float> out(elems);
  if (!CK(cudaMemcpy(out.data(), o.p, elems * sizeof(float), cudaMemcpyDeviceToHost))) return 0;
  double sum = 0, sq = 0;
  for (float x : out) sum += x, sq += double(x) * x;
  std::printf("attention: %ux%ux%ux%u flags %u: sum %.5f, sum of squares %.5f\n", batch, heads,
              seq, hd, flags, sum, sq);
  return 0;
}
