// Fuzz target: a tokenizer on the host, then an embedding lookup (gather rows of a
// [kVocab x kDim] table) and mean pooling per sentence on the GPU.
//
// Tokens: white space separates; each ASCII punctuation byte is a token of its own, each
// other control byte an unknown one; '.', '!' and '?' end a sentence; "[N]" (1 to 7
// digits) is a pre-tokenized id, as in "[101] hello [102]"; every other run of bytes is
// a word, lower-cased (its first kMaxWord bytes) and hashed (FNV-1a) into the
// vocabulary's hashed range.
//
// Planted bugs (-DCUSAFE_FIXED builds the fixed variant):
//  1. device, heap-buffer-overflow (READ): pre-tokenized ids are trusted, so "[N]" with
//     N >= kVocab (512) gathers a row past the table. The seeds use [101] and [102]:
//     one digit up is enough ("[601]").
//  2. host, heap-buffer-overflow (WRITE): words are truncated to kMaxWord (32) bytes,
//     but a word with capitals, lower-cased in a kMaxWord-byte buffer, is copied there
//     whole. The seeds' only capitalized word is "Hello": make it 33 bytes or longer.
#include <cusafe/fuzz.h>
#include <cuda_runtime.h>
#include <algorithm>
#include <cctype>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <vector>

#include "../common/cuda_check.h"

constexpr int kVocab = 512, kDim = 64;
constexpr int kUnk = 1, kSpecial = 4;  // ids 0..3: padding, unknown, two reserved
constexpr size_t kMaxWord = 32;
constexpr size_t kMaxTokens = 1 << 16;  // 16 MiB of gathered rows on the device

__global__ void init_table(float *table) {
  const unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= unsigned(kVocab * kDim)) return;
  unsigned x = i * 2654435761u ^ 0x9e3779b9u;
  x ^= x >> 15, x *= 0x2c1b3c6du, x ^= x >> 12;
  table[i] = float(x & 0xffff) * (2.0f / 65535) - 1.0f;
}

__global__ void gather(const int *ids, const float *table, float *emb, int ntok) {
  const int t = blockIdx.x, d = threadIdx.x;
  if (t >= ntok) return;
  emb[size_t(t) * kDim + d] = table[size_t(ids[t]) * kDim + d]; // cusafe-expect: heap-buffer-overflow
}

// One block per sentence, one thread per dimension.
__global__ void mean_pool(const float *emb, const int *seg, float *out) {
  const int s = blockIdx.x, d = threadIdx.x;
  const int lo = seg[s], hi = seg[s + 1];
  float acc = 0;
  for (int t = lo; t < hi; ++t) acc += emb[size_t(t) * kDim + d];
  out[size_t(s) * kDim + d] = acc / float(hi - lo);
}

static bool is_space(uint8_t c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }
static bool is_punct(uint8_t c) { return c > ' ' && c < 0x7f && !std::isalnum(c); }
static bool is_upper(uint8_t c) { return c >= 'A' && c <= 'Z'; }

CUSAFE_FUZZ_TARGET(data, size) {
  std::vector<int> ids, seg{0};  // seg: first token of each sentence, then the end
  std::vector<uint8_t> word(kMaxWord);
  size_t i = 0;
  while (i < size) {
    const uint8_t c = data[i];
    if (is_space(c)) {
      ++i;
      continue;
    }
    if (ids.size() == kMaxTokens) return 0;
    if (c == '[') {  // "[N]": a pre-tokenized id
      size_t j = i + 1;
      unsigned id = 0;
      while (j < size && j - i <= 7 && data[j] >= '0' && data[j] <= '9')
        id = id * 10 + unsigned(data[j++] - '0');
      if (j > i + 1 && j < size && data[j] == ']') {
#ifdef CUSAFE_FIXED
        if (id >= unsigned(kVocab)) id = kUnk;
#endif
        ids.push_back(int(id));
        i = j + 1;
        continue;
      }
    }
    if (c < ' ' || c == 0x7f) {  // a control byte: unknown
      ids.push_back(kUnk);
      ++i;
      continue;
    }
    if (is_punct(c)) {
      ids.push_back(kSpecial + c);  // a token of its own, below the hashed range
      ++i;
      if (c == '.' || c == '!' || c == '?') seg.push_back(int(ids.size()));
      continue;
    }
    size_t j = i;
    while (j < size && data[j] > ' ' && data[j] != 0x7f && !is_punct(data[j])) ++j;
    const size_t len = j - i, n = len < kMaxWord ? len : kMaxWord;  // hashed: the first n
    const uint8_t *w = data + i;
    if (std::any_of(w, w + n, is_upper)) {  // lower-case a copy (most words need none)
#ifdef CUSAFE_FIXED
      const size_t copy = n;
#else
      const size_t copy = len;
#endif
      std::memcpy(word.data(), w, copy); // asan-expect: heap-buffer-overflow
      for (size_t k = 0; k < n; ++k) word[k] = uint8_t(is_upper(word[k]) ? word[k] + 32 : word[k]);
      w = word.data();
    }
    uint32_t hash = 2166136261u;
    for (size_t k = 0; k < n; ++k) hash = (hash ^ w[k]) * 16777619u;
    ids.push_back(kSpecial + 128 + int(hash % (kVocab - kSpecial - 128)));
    i = j;
  }
  if (ids.empty()) return 0;
  if (seg.back() != int(ids.size())) seg.push_back(int(ids.size()));  // unterminated last sentence
  const int ntok = int(ids.size()), nseg = int(seg.size()) - 1;

  Dev<float> table, emb, out;
  Dev<int> dids, dseg;
  if (!table.alloc(size_t(kVocab) * kDim) || !emb.alloc(size_t(ntok) * kDim) ||
      !out.alloc(size_t(nseg) * kDim) || !dids.alloc(ntok) || !dseg.alloc(nseg + 1))
    return 0;
  if (!CK(cudaMemcpy(dids.p, ids.data(), ntok * sizeof(int), cudaMemcpyHostToDevice)) ||
      !CK(cudaMemcpy(dseg.p, seg.data(), (nseg + 1) * sizeof(int), cudaMemcpyHostToDevice)))
    return 0;
  init_table<<<(kVocab * kDim + 255) / 256, 256>>>(table.p);
  gather<<<ntok, kDim>>>(dids.p, table.p, emb.p, ntok);
  mean_pool<<<nseg, kDim>>>(emb.p, dseg.p, out.p);
  if (!CK(cudaGetLastError()) || !CK(cudaDeviceSynchronize())) return 0;
  std::vector<float> pooled(size_t(nseg) * kDim);
  if (!CK(cudaMemcpy(pooled.data(), out.p, pooled.size() * sizeof(float),
                     cudaMemcpyDeviceToHost)))
    return 0;
  double sum = 0;
  for (float v : pooled) sum += v;
  std::printf("tokens_embed: %d tokens, %d sentences, pooled sum %.4f\n", ntok, nseg, sum);
  return 0;
}
