// Correct: the device heap across kernels.
// - create allocates blocks of 1, 16, 255, 256, 257, 4096 and 65537 bytes with malloc,
//   a three-node list with new, an int array with new[] and an array of a type with a
//   destructor with new[] (a cookie in front of the elements), and stores them with
//   their one-past-the-end pointers in global memory;
// - fill writes the blocks (strided by thread); check walks them with p != end loops,
//   backwards from the stored end pointers, and follows the list (a later launch);
// - release frees everything (free, delete, delete[]) in a third kernel;
// - staged_sum asks for one staging buffer larger than the heap, gets NULL and falls
//   back to chunks of a small one (the same sum either way);
// - cudaDeviceSetLimit(cudaLimitMallocHeapSize) before the first launch.
#include "../../examples/common.h"
#include <new> // clang's device operator new[] and delete[]

constexpr int NS = 7;
__constant__ int kSizes[NS] = {1, 16, 255, 256, 257, 4096, 65537};

struct Node {
  int key;
  Node *next;
};

struct Acc {
  int v;
  __device__ ~Acc() {} // user-provided: new[] keeps the count in a cookie
};

struct Slot {
  unsigned char *begin, *end; // end: one past the last byte
  int *arr, *arr_end;
  Acc *accs;
  Node *list;
};

__global__ void create(Slot *slots, unsigned long long *failures) {
  int i = threadIdx.x;
  if (i >= NS) return;
  Slot s{};
  s.begin = static_cast<unsigned char *>(malloc(kSizes[i]));
  if (s.begin) s.end = s.begin + kSizes[i];
  int n = kSizes[i] / 4 + 1; // 1, 5, 64, 65, 65, 1025, 16385 ints
  s.arr = new int[n];
  if (s.arr) s.arr_end = s.arr + n;
  s.accs = new Acc[i + 1];
  for (int k = 0; k < 3; ++k) {
    Node *nd = new Node{i * 10 + k, s.list};
    if (!nd) break;
    s.list = nd;
  }
  if (!s.begin || !s.arr || !s.accs) atomicAdd(failures, 1ull);
  slots[i] = s;
}

__global__ void fill(const Slot *slots) {
  const Slot s = slots[blockIdx.x];
  size_t bytes = s.end - s.begin, ints = s.arr_end - s.arr;
  for (size_t j = threadIdx.x; j < bytes; j += blockDim.x) s.begin[j] = (unsigned char)(j * 7 + blockIdx.x);
  for (size_t j = threadIdx.x; j < ints; j += blockDim.x) s.arr[j] = int(j % 1000) - 500;
  if (threadIdx.x == 0 && s.accs)
    for (int k = 0; k <= int(blockIdx.x); ++k) s.accs[k].v = k * k;
}

__global__ void check(const Slot *slots, unsigned long long *sums) {
  if (threadIdx.x != 0) return;
  const Slot s = slots[blockIdx.x];
  unsigned long long h = 0;
  for (const unsigned char *p = s.end; p != s.begin;) h = h * 31 + *--p; // backwards from end
  for (const int *q = s.arr; q != s.arr_end; ++q) h += unsigned(*q);
  if (s.accs)
    for (const Acc *a = s.accs, *e = s.accs + blockIdx.x + 1; a != e; ++a) h += a->v;
  for (const Node *n = s.list; n; n = n->next) h = h * 7 + n->key;
  sums[blockIdx.x] = h;
}

__global__ void release(Slot *slots) {
  if (threadIdx.x >= NS) return;
  Slot &s = slots[threadIdx.x];
  free(s.begin); // free(NULL) is allowed
  delete[] s.arr;
  delete[] s.accs;
  for (Node *n = s.list, *next; n; n = next) {
    next = n->next;
    delete n;
  }
  s = Slot{};
}

__global__ void staged_sum(const int *in, int n, size_t big, unsigned long long *out) {
  if (threadIdx.x != 0) return;
  int chunk = n;
  int *stage = static_cast<int *>(malloc(big)); // more than the heap holds: NULL
  if (!stage) {
    chunk = 1024;
    stage = static_cast<int *>(malloc(chunk * sizeof(int)));
  }
  if (!stage) return; // *out stays 0
  unsigned long long s = 0;
  for (int base = 0; base < n; base += chunk) {
    int m = min(chunk, n - base);
    for (int k = 0; k < m; ++k) stage[k] = in[base + k] * 3;
    for (const int *p = stage, *e = stage + m; p != e; ++p) s += unsigned(*p);
  }
  free(stage);
  *out = s;
}

int main() {
  const size_t heap = size_t(32) << 20;
  CK(cudaDeviceSetLimit(cudaLimitMallocHeapSize, heap));
  const int n = 10000;
  int h_in[n];
  for (int i = 0; i < n; ++i) h_in[i] = i % 97;
  Slot *slots;
  int *in;
  unsigned long long *res; // NS checksums, the failure count, the staged sum
  CK(cudaMalloc(&slots, NS * sizeof(Slot)));
  CK(cudaMalloc(&in, n * sizeof(int)));
  CK(cudaMalloc(&res, (NS + 2) * sizeof(unsigned long long)));
  CK(cudaMemcpy(in, h_in, sizeof h_in, cudaMemcpyHostToDevice));
  CK(cudaMemset(res, 0, (NS + 2) * sizeof(unsigned long long)));
  create<<<1, 32>>>(slots, res + NS);
  fill<<<NS, 128>>>(slots);
  check<<<NS, 32>>>(slots, res);
  release<<<1, 32>>>(slots);
  staged_sum<<<1, 32>>>(in, n, 2 * heap, res + NS + 1);
  CK(cudaDeviceSynchronize());
  unsigned long long h[NS + 2], total = 0;
  CK(cudaMemcpy(h, res, sizeof h, cudaMemcpyDeviceToHost));
  for (int i = 0; i < NS; ++i) total ^= h[i];
  std::printf("allocation failures %llu, checksum %llx, staged sum %llu\n", h[NS], total, h[NS + 1]);
  CK(cudaFree(slots));
  CK(cudaFree(in));
  CK(cudaFree(res));
  return 0;
}
