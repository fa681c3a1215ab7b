// A caching allocator releases its cached segments (what torch.cuda.empty_cache()
// does) while an evaluation step still holds a tensor view into one of them: a 20 MiB
// segment, freed with cudaFree, and read by a kernel launched after the release and
// after 200 other large allocations. Bug: use-after-free, READ (delayed, a buffer of
// whole 2 MiB granules).
#include "../../examples/common.h"
#include <vector>

constexpr size_t kSegment = size_t(20) << 20;

__global__ void accuracy(const int *pred, const int *label, int n, unsigned *hits) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n && pred[i] == label[i]) atomicAdd(hits, 1u); // cusafe-expect: use-after-free
}

int main() {
  const int n = 1 << 16;
  char *segment;
  int *label;
  unsigned *hits;
  CK(cudaMalloc(&segment, kSegment));
  CK(cudaMalloc(&label, n * sizeof(int)));
  CK(cudaMalloc(&hits, sizeof(unsigned)));
  int *pred = reinterpret_cast<int *>(segment + (size_t(6) << 20)); // a view 6 MiB in
  std::vector<int> h(n);
  for (int i = 0; i < n; ++i) h[i] = i % 10;
  CK(cudaMemcpy(pred, h.data(), n * sizeof(int), cudaMemcpyHostToDevice));
  CK(cudaMemcpy(label, h.data(), n * sizeof(int), cudaMemcpyHostToDevice));
  CK(cudaFree(segment)); // empty_cache(): the segment goes back to the driver
  for (int k = 0; k < 200; ++k) { // the next epoch's segments
    void *p;
    CK(cudaMalloc(&p, kSegment));
    CK(cudaFree(p));
  }
  CK(cudaMemset(hits, 0, sizeof(unsigned)));
  accuracy<<<(n + 255) / 256, 256>>>(pred, label, n, hits);
  CK(cudaDeviceSynchronize());
  unsigned got = 0;
  CK(cudaMemcpy(&got, hits, sizeof(unsigned), cudaMemcpyDeviceToHost));
  std::printf("accuracy %u / %d\n", got, n);
  CK(cudaFree(label));
  CK(cudaFree(hits));
  return 0;
}
