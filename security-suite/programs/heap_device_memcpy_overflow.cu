// Packs variable-length tokens into fixed 16-byte slots for a lookup table, one
// thread per token, with a device-side memcpy of each token's length. Truncation to
// the slot width was forgotten: the longest token (20 bytes) is the last one, so its
// copy runs 4 bytes past the end of the slot array.
// Bug: heap-buffer-overflow, WRITE (device memcpy range).
#include "../../examples/common.h"
#include <cstring>
#include <string>
#include <vector>

constexpr int SLOT = 16;

__global__ void pack_tokens(const char *text, const int *start, const int *len, char *slots,
                            int count) {
  int t = blockIdx.x * blockDim.x + threadIdx.x;
  if (t < count) memcpy(slots + t * SLOT, text + start[t], len[t]); // cusafe-expect: heap-buffer-overflow
}

int main() {
  const char *words[] = {"kernel", "warp", "shared", "block", "grid", "stream", "event",
                         "cooperative_launches"};
  const int count = sizeof words / sizeof words[0];
  std::string text;
  std::vector<int> start, len;
  for (const char *w : words) {
    start.push_back((int)text.size());
    len.push_back((int)std::strlen(w));
    text += w;
  }
  char *dtext, *slots;
  int *dstart, *dlen;
  CK(cudaMalloc(&dtext, text.size()));
  CK(cudaMalloc(&dstart, count * sizeof(int)));
  CK(cudaMalloc(&dlen, count * sizeof(int)));
  CK(cudaMalloc(&slots, count * SLOT));
  CK(cudaMemcpy(dtext, text.data(), text.size(), cudaMemcpyHostToDevice));
  CK(cudaMemcpy(dstart, start.data(), count * sizeof(int), cudaMemcpyHostToDevice));
  CK(cudaMemcpy(dlen, len.data(), count * sizeof(int), cudaMemcpyHostToDevice));
  CK(cudaMemset(slots, 0, count * SLOT));
  pack_tokens<<<1, 32>>>(dtext, dstart, dlen, slots, count);
  CK(cudaDeviceSynchronize());
  std::vector<char> h(count * SLOT);
  CK(cudaMemcpy(h.data(), slots, h.size(), cudaMemcpyDeviceToHost));
  std::printf("slot 0 '%.16s', slot 5 '%.16s'\n", &h[0], &h[5 * SLOT]);
  CK(cudaFree(dtext));
  CK(cudaFree(dstart));
  CK(cudaFree(dlen));
  CK(cudaFree(slots));
  return 0;
}
