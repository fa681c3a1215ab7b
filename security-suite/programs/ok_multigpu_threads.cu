// Correct: one host thread per GPU, as a data-parallel trainer's workers are. Each
// thread selects its device with cudaSetDevice, then in rounds allocates buffers of
// odd sizes (cudaMalloc and stream-ordered cudaMallocAsync), fills them with a kernel,
// reduces them with integer atomics, copies the result back on its own stream,
// checks it on the host and frees everything. Each worker hands one buffer back to
// the main thread, which frees it with the *other* device current (cudaFree takes a
// pointer of any device). Results are printed in device order after the joins.
// Needs 2 GPUs: with fewer it prints "skipped: needs 2 GPUs" and exits 77.
#include "../../examples/common.h"
#include <thread>
#include <vector>

static void need_gpus(int want) {
  int n = 0;
  if (cudaGetDeviceCount(&n) != cudaSuccess) n = 0;
  if (n < want) {
    std::printf("skipped: needs %d GPUs, found %d\n", want, n);
    std::exit(77);
  }
}

__global__ void fill(int *a, int n, int seed) {
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
    a[i] = (i * 31 + seed) % 97;
}

__global__ void sum(const int *a, int n, unsigned long long *out) {
  unsigned long long s = 0;
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) s += a[i];
  atomicAdd(out, s);
}

struct Result {
  int device = -1;
  int rounds = 0;
  int checked = 0;
  unsigned long long total = 0;
  int *handed_back = nullptr; // freed by the main thread
  int handed_back_n = 0;
  bool ok = true;
};

static void worker(int dev, Result *r) {
  CK(cudaSetDevice(dev));
  cudaStream_t s;
  CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  unsigned long long *d_out, h_out;
  CK(cudaMalloc(&d_out, sizeof(unsigned long long)));
  r->device = dev;
  for (int round = 0; round < 40; ++round) {
    int n = 1 + (round * 7919 + dev * 104729) % 200003;
    int *a;
    if (round % 2) CK(cudaMallocAsync(&a, n * sizeof(int), s));
    else CK(cudaMalloc(&a, n * sizeof(int)));
    fill<<<64, 256, 0, s>>>(a, n, round + dev);
    CK(cudaMemsetAsync(d_out, 0, sizeof(unsigned long long), s));
    sum<<<64, 256, 0, s>>>(a, n, d_out);
    CK(cudaGetLastError());
    CK(cudaMemcpyAsync(&h_out, d_out, sizeof(h_out), cudaMemcpyDeviceToHost, s));
    CK(cudaStreamSynchronize(s));
    unsigned long long want = 0;
    for (int i = 0; i < n; ++i) want += (unsigned long long)((i * 31 + round + dev) % 97);
    r->ok = r->ok && want == h_out;
    r->checked += want == h_out;
    r->total += h_out;
    ++r->rounds;
    if (round == 38) { // a cudaMalloc block
      r->handed_back = a;
      r->handed_back_n = n;
    } else if (round % 2) {
      CK(cudaFreeAsync(a, s));
    } else {
      CK(cudaFree(a));
    }
  }
  CK(cudaStreamSynchronize(s));
  CK(cudaFree(d_out));
  CK(cudaStreamDestroy(s));
}

int main() {
  need_gpus(2);
  Result res[2];
  std::vector<std::thread> ts;
  for (int d = 0; d < 2; ++d) ts.emplace_back(worker, d, &res[d]);
  for (auto &t : ts) t.join();
  bool all = true;
  for (int d = 0; d < 2; ++d) {
    std::printf("device %d: %d rounds, %d checked, total %llu\n", res[d].device, res[d].rounds,
                res[d].checked, res[d].total);
    all = all && res[d].ok;
  }
  // The handed-back buffers: read each from its device, free it from the other one.
  for (int d = 0; d < 2; ++d) {
    std::vector<int> h(res[d].handed_back_n);
    CK(cudaSetDevice(d));
    CK(cudaMemcpy(h.data(), res[d].handed_back, h.size() * sizeof(int), cudaMemcpyDeviceToHost));
    long long s = 0;
    for (int v : h) s += v;
    CK(cudaSetDevice(1 - d));
    CK(cudaFree(res[d].handed_back));
    std::printf("device %d's last buffer: %d ints, sum %lld, freed with device %d current\n", d,
                res[d].handed_back_n, s, 1 - d);
  }
  std::printf("%s\n", all ? "all results correct" : "WRONG RESULTS");
  return all ? 0 : 1;
}
