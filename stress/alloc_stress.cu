// Allocator stress: many host threads allocating and freeing device memory of random
// sizes while kernels, stream-ordered allocations and graph launches run on shared
// streams. Every buffer is filled with a pattern derived from (thread, op, byte index);
// verify kernels and host read-backs count the bytes that do not hold it. A correct
// allocator (plain CUDA, or cusafe's) gives corruptions=0 and frees everything.
//
// Usage: alloc_stress [THREADS [OPS]]   (defaults 16 and 10000)
//   OPS allocation/free operations per thread; fills, verifies, read-backs, stream
//   switches and graph launches happen between them and are counted separately.
// Environment: STRESS_WATCHDOG_S (default 60): seconds without progress after which
//   the watchdog ends the process ("deadlock: no progress for N s", exit 3).
//   STRESS_GRAPH_API=1: build each graph node by node (cudaGraphAddKernelNode) instead
//   of capturing it from a stream.
// Output: one line
//   stress: threads=16 ops=160000 seconds=... ops_per_s=... corruptions=0 ... leaked=0
// Exit: 0 when corruptions=0 and leaked=0; 1 otherwise; 2 bad arguments; 3 a failed
// CUDA call (CK names it) or the watchdog.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <thread>
#include <vector>

#include "../examples/common.h"

namespace {

constexpr int kStreams = 4;         // shared streams, used round-robin by every thread
constexpr int kMaxLive = 24;        // live buffers per thread at most
constexpr int kEvents = 8;          // per-thread ring of events for stream switches
constexpr size_t kMaxSize = 4u << 20;   // largest buffer (plus a few bytes)
constexpr size_t kHostCheck = 1u << 20; // bytes read back per host check at most
constexpr int kGraphEvery = 50;     // a graph launch every this many ops
constexpr int kRecaptureEvery = 2000; // a fresh capture every this many ops
constexpr size_t kGraphBytes = 64u << 10;

// One byte of the pattern of buffer `key` at index `i`.
__host__ __device__ inline uint8_t pattern(uint32_t key, uint64_t i) {
  uint32_t x = key ^ static_cast<uint32_t>(i * 0x9E3779B1u) ^ static_cast<uint32_t>(i >> 32);
  x ^= x >> 15;
  x *= 0x2C1B3C6Du;
  x ^= x >> 12;
  x *= 0x297A2D39u;
  x ^= x >> 15;
  return static_cast<uint8_t>(x);
}

// The key of the contents written by thread `t` at op `op` (never 0).
uint32_t key_of(int t, int op) {
  uint32_t k = static_cast<uint32_t>(t) * 0x01000193u ^ static_cast<uint32_t>(op) * 0x85EBCA6Bu;
  return k ? k : 1;
}

__global__ void fill(uint8_t *p, size_t n, uint32_t key) {
  for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < n; i += size_t(gridDim.x) * blockDim.x)
    p[i] = pattern(key, i);
}

// counters[0] += bytes that differ from the pattern, counters[1] += the sum of the bytes.
__global__ void verify(const uint8_t *p, size_t n, uint32_t key, unsigned long long *counters) {
  unsigned long long bad = 0, sum = 0;
  for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < n; i += size_t(gridDim.x) * blockDim.x) {
    uint8_t v = p[i];
    bad += v != pattern(key, i);
    sum += v;
  }
  if (bad) atomicAdd(&counters[0], bad);
  atomicAdd(&counters[1], sum);
}

unsigned grid_for(size_t n) { return static_cast<unsigned>(std::min<size_t>((n + 255) / 256, 256)); }

// xorshift64*: deterministic per thread.
struct Rng {
  uint64_t s;
  explicit Rng(uint64_t seed) : s(seed ? seed : 0x9E3779B97F4A7C15ull) {}
  uint64_t next() {
    s ^= s >> 12;
    s ^= s << 25;
    s ^= s >> 27;
    return s * 0x2545F4914F6CDD1Dull;
  }
  uint64_t below(uint64_t n) { return next() % n; }
};

// A size from 1 byte to a little over kMaxSize: small, medium, large, and sizes at and
// around powers of two and cusafe's class limits (2^k - 256: a 256-byte header).
size_t random_size(Rng &r) {
  uint64_t c = r.below(100);
  if (c < 35) return 1 + r.below(4096);
  if (c < 55) return 4096 + r.below(256u << 10);
  if (c < 65) return (256u << 10) + r.below(kMaxSize - (256u << 10));
  uint64_t k = r.below(23); // 1 .. 4 MiB
  size_t p = size_t(1) << k;
  static const long long deltas[] = {0, 1, 2, 7, -1, -255, -256, -257};
  long long s = static_cast<long long>(p) + deltas[r.below(8)];
  return s < 1 ? 1 : static_cast<size_t>(s);
}

struct Buf {
  uint8_t *p;
  size_t n;
  uint32_t key;
  int stream; // the shared stream that touched it last
  bool async; // from cudaMallocAsync (freed with cudaFreeAsync)
};

struct Shared {
  cudaStream_t streams[kStreams];
  bool pools; // the device supports cudaMallocAsync
  bool graph_api = false; // STRESS_GRAPH_API=1: graphs built node by node, not captured
  std::atomic<unsigned long long> progress{0};
  std::atomic<unsigned long long> corruptions{0}, allocs{0}, frees{0}, async_allocs{0};
  std::atomic<unsigned long long> kernels{0}, graph_launches{0}, host_checks{0};
  std::atomic<unsigned long long> checked_bytes{0}, capture_errors{0};
};

// One host thread's work.
class Worker {
 public:
  Worker(Shared &sh, int id, int ops)
      : sh_(sh), id_(id), ops_(ops), rng_(0x5EED0000ull + 0x9E3779B97F4A7C15ull * (id + 1)) {}

  void run() {
    CK(cudaMalloc(&counters_, 2 * sizeof(unsigned long long)));
    CK(cudaMemset(counters_, 0, 2 * sizeof(unsigned long long)));
    CK(cudaMallocHost(&host_, kHostCheck));
    for (auto &e : events_) CK(cudaEventCreateWithFlags(&e, cudaEventDisableTiming));
    CK(cudaEventCreateWithFlags(&graph_done_, cudaEventDisableTiming));
    CK(cudaStreamCreateWithFlags(&capture_, cudaStreamNonBlocking));
    capture(0);
    int op = 0;
    while (op < ops_) {
      bool alloc = live_.size() < 2 || (live_.size() < kMaxLive && rng_.below(100) < 55);
      if (alloc)
        allocate(op);
      else
        release(rng_.below(live_.size()));
      ++op;
      sh_.progress.fetch_add(1, std::memory_order_relaxed);
      if (!live_.empty() && rng_.below(100) < 25) check_on_device(live_[rng_.below(live_.size())]);
      if (!live_.empty() && rng_.below(100) < 5) refill(live_[rng_.below(live_.size())], op);
      if (!live_.empty() && rng_.below(100) < 3) check_on_host(live_[rng_.below(live_.size())]);
      if (op % kGraphEvery == 0 && exec_) launch_graph();
      if (op % kRecaptureEvery == 0) capture(op);
    }
    while (!live_.empty()) release(live_.size() - 1);
    finish();
  }

 private:
  int next_stream() { return turn_++ % kStreams; }

  // Makes shared stream `to` wait for the work queued on `b` so far, and moves `b` there.
  void move(Buf &b, int to) {
    if (b.stream == to) return;
    cudaEvent_t e = events_[event_turn_++ % kEvents];
    CK(cudaEventRecord(e, sh_.streams[b.stream]));
    CK(cudaStreamWaitEvent(sh_.streams[to], e, 0));
    b.stream = to;
  }

  void allocate(int op) {
    Buf b{nullptr, random_size(rng_), key_of(id_, op), next_stream(), false};
    if (sh_.pools && rng_.below(100) < 15) {
      CK(cudaMallocAsync(reinterpret_cast<void **>(&b.p), b.n, sh_.streams[b.stream]));
      b.async = true;
      sh_.async_allocs.fetch_add(1, std::memory_order_relaxed);
    } else {
      CK(cudaMalloc(&b.p, b.n));
    }
    sh_.allocs.fetch_add(1, std::memory_order_relaxed);
    fill<<<grid_for(b.n), 256, 0, sh_.streams[b.stream]>>>(b.p, b.n, b.key);
    CK(cudaGetLastError());
    sh_.kernels.fetch_add(1, std::memory_order_relaxed);
    live_.push_back(b);
  }

  void release(size_t i) {
    Buf b = live_[i];
    live_[i] = live_.back();
    live_.pop_back();
    if (rng_.below(100) < 30) check_on_device(b);
    if (b.async) {
      CK(cudaFreeAsync(b.p, sh_.streams[b.stream]));
    } else {
      CK(cudaFree(b.p)); // waits for the device, like every cudaFree
    }
    sh_.frees.fetch_add(1, std::memory_order_relaxed);
  }

  void refill(Buf &b, int op) {
    move(b, next_stream());
    b.key = key_of(id_, op) ^ 0x5A5A5A5Au;
    fill<<<grid_for(b.n), 256, 0, sh_.streams[b.stream]>>>(b.p, b.n, b.key);
    CK(cudaGetLastError());
    sh_.kernels.fetch_add(1, std::memory_order_relaxed);
  }

  void check_on_device(Buf &b) {
    move(b, next_stream());
    verify<<<grid_for(b.n), 256, 0, sh_.streams[b.stream]>>>(b.p, b.n, b.key, counters_);
    CK(cudaGetLastError());
    sh_.kernels.fetch_add(1, std::memory_order_relaxed);
  }

  // Copies (a window of) `b` back and compares it on the host.
  void check_on_host(Buf &b) {
    size_t n = std::min(b.n, kHostCheck);
    size_t off = b.n > n ? rng_.below(b.n - n + 1) : 0;
    cudaStream_t s = sh_.streams[b.stream];
    CK(cudaMemcpyAsync(host_, b.p + off, n, cudaMemcpyDeviceToHost, s));
    CK(cudaStreamSynchronize(s));
    unsigned long long bad = 0;
    for (size_t i = 0; i < n; ++i) bad += host_[i] != pattern(b.key, off + i);
    if (bad) {
      std::fprintf(stderr, "alloc_stress: thread %d: %llu of %zu bytes wrong at offset %zu of a %zu-byte buffer\n",
                   id_, bad, n, off, b.n);
      sh_.corruptions.fetch_add(bad, std::memory_order_relaxed);
    }
    sh_.host_checks.fetch_add(1, std::memory_order_relaxed);
    sh_.checked_bytes.fetch_add(n, std::memory_order_relaxed);
  }

  // (Re)captures fill + verify of the thread's graph buffer into a graph and
  // instantiates it. Thread-local capture mode: other threads may go on allocating.
  void capture(int op) {
    drop_graph();
    CK(cudaMalloc(&graph_buf_, kGraphBytes));
    graph_key_ = key_of(id_, op) ^ 0xC0FFEEu;
    cudaGraph_t g = nullptr;
    cudaError_t e = cudaSuccess;
    if (sh_.graph_api) {
      // STRESS_GRAPH_API=1: the same two nodes through the graph API, no capture.
      size_t bytes = kGraphBytes;
      void *fill_args[] = {&graph_buf_, &bytes, &graph_key_};
      void *verify_args[] = {&graph_buf_, &bytes, &graph_key_, &counters_};
      cudaKernelNodeParams fp = {};
      fp.func = reinterpret_cast<void *>(fill);
      fp.gridDim = dim3(grid_for(kGraphBytes));
      fp.blockDim = dim3(256);
      fp.kernelParams = fill_args;
      cudaKernelNodeParams vp = fp;
      vp.func = reinterpret_cast<void *>(verify);
      vp.kernelParams = verify_args;
      cudaGraphNode_t nf, nv;
      CK(cudaGraphCreate(&g, 0));
      CK(cudaGraphAddKernelNode(&nf, g, nullptr, 0, &fp));
      CK(cudaGraphAddKernelNode(&nv, g, &nf, 1, &vp));
    } else {
      CK(cudaStreamBeginCapture(capture_, cudaStreamCaptureModeThreadLocal));
      fill<<<grid_for(kGraphBytes), 256, 0, capture_>>>(graph_buf_, kGraphBytes, graph_key_);
      verify<<<grid_for(kGraphBytes), 256, 0, capture_>>>(graph_buf_, kGraphBytes, graph_key_, counters_);
      e = cudaStreamEndCapture(capture_, &g);
    }
    if (e == cudaSuccess) e = cudaGraphInstantiate(&exec_, g, 0);
    if (g) CK(cudaGraphDestroy(g));
    if (e != cudaSuccess) {
      // Counted, not fatal: the line says how many captures the driver refused.
      std::fprintf(stderr, "alloc_stress: thread %d: graph capture failed: %s\n", id_, cudaGetErrorString(e));
      (void)cudaGetLastError();
      exec_ = nullptr;
      sh_.capture_errors.fetch_add(1, std::memory_order_relaxed);
    }
  }

  void launch_graph() {
    cudaStream_t s = sh_.streams[next_stream()];
    CK(cudaGraphLaunch(exec_, s));
    CK(cudaEventRecord(graph_done_, s));
    graph_pending_ = true;
    sh_.graph_launches.fetch_add(1, std::memory_order_relaxed);
  }

  // Waits for the last graph launch, then destroys the graph and frees its buffer.
  void drop_graph() {
    if (graph_pending_) CK(cudaEventSynchronize(graph_done_));
    graph_pending_ = false;
    if (exec_) CK(cudaGraphExecDestroy(exec_));
    exec_ = nullptr;
    if (graph_buf_) CK(cudaFree(graph_buf_));
    graph_buf_ = nullptr;
  }

  void finish() {
    drop_graph();
    for (auto s : sh_.streams) CK(cudaStreamSynchronize(s));
    unsigned long long c[2];
    CK(cudaMemcpy(c, counters_, sizeof c, cudaMemcpyDeviceToHost));
    if (c[0]) {
      std::fprintf(stderr, "alloc_stress: thread %d: verify kernels found %llu wrong bytes\n", id_, c[0]);
      sh_.corruptions.fetch_add(c[0], std::memory_order_relaxed);
    }
    CK(cudaFree(counters_));
    CK(cudaFreeHost(host_));
    for (auto e : events_) CK(cudaEventDestroy(e));
    CK(cudaEventDestroy(graph_done_));
    CK(cudaStreamDestroy(capture_));
  }

  Shared &sh_;
  int id_, ops_;
  Rng rng_;
  std::vector<Buf> live_;
  unsigned turn_ = 0, event_turn_ = 0;
  cudaEvent_t events_[kEvents] = {};
  cudaEvent_t graph_done_ = nullptr;
  cudaStream_t capture_ = nullptr;
  cudaGraphExec_t exec_ = nullptr;
  uint8_t *graph_buf_ = nullptr;
  uint32_t graph_key_ = 0;
  bool graph_pending_ = false;
  unsigned long long *counters_ = nullptr;
  uint8_t *host_ = nullptr;
};

int positive(const char *s, const char *what) {
  char *end;
  long v = std::strtol(s, &end, 10);
  if (*end || v < 1 || v > 1000000) {
    std::fprintf(stderr, "alloc_stress: %s must be an integer 1..1000000, got '%s'\n", what, s);
    std::exit(2);
  }
  return static_cast<int>(v);
}

} // namespace

int main(int argc, char **argv) {
  if (argc > 3) {
    std::fprintf(stderr, "usage: alloc_stress [THREADS [OPS]]\n");
    return 2;
  }
  int threads = argc > 1 ? positive(argv[1], "THREADS") : 16;
  int ops = argc > 2 ? positive(argv[2], "OPS") : 10000;
  int limit = 60;
  if (const char *w = std::getenv("STRESS_WATCHDOG_S")) limit = positive(w, "STRESS_WATCHDOG_S");

  Shared sh;
  int dev = 0, pools = 0;
  CK(cudaGetDevice(&dev));
  CK(cudaDeviceGetAttribute(&pools, cudaDevAttrMemoryPoolsSupported, dev));
  sh.pools = pools != 0;
  const char *api = std::getenv("STRESS_GRAPH_API");
  sh.graph_api = api && std::strcmp(api, "1") == 0;
  for (auto &s : sh.streams) CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));

  // The watchdog: no op finished for `limit` seconds means a deadlock (or a hang in
  // the driver); _Exit, because exit handlers could wait on the stuck threads.
  std::atomic<bool> done{false};
  std::thread watchdog([&] {
    unsigned long long last = sh.progress.load();
    auto since = std::chrono::steady_clock::now();
    while (!done.load()) {
      std::this_thread::sleep_for(std::chrono::milliseconds(200));
      unsigned long long now = sh.progress.load();
      auto t = std::chrono::steady_clock::now();
      if (now != last) {
        last = now;
        since = t;
      } else if (t - since >= std::chrono::seconds(limit)) {
        std::fprintf(stderr, "deadlock: no progress for %d s (%llu ops done)\n", limit, now);
        std::fflush(stdout);
        std::fflush(stderr);
        std::_Exit(3);
      }
    }
  });

  auto t0 = std::chrono::steady_clock::now();
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t)
    pool.emplace_back([&sh, t, ops] { Worker(sh, t, ops).run(); });
  for (auto &t : pool) t.join();
  CK(cudaDeviceSynchronize());
  for (auto s : sh.streams) CK(cudaStreamDestroy(s));
  double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  done = true;
  watchdog.join();

  unsigned long long total = static_cast<unsigned long long>(threads) * ops;
  unsigned long long leaked = sh.allocs - sh.frees;
  unsigned long long corruptions = sh.corruptions;
  std::printf("stress: threads=%d ops=%llu seconds=%.2f ops_per_s=%.0f corruptions=%llu graph_launches=%llu "
              "async_allocs=%llu leaked=%llu allocs=%llu frees=%llu kernels=%llu host_checks=%llu "
              "checked_bytes=%llu capture_errors=%llu\n",
              threads, total, secs, secs > 0 ? total / secs : 0.0, corruptions, sh.graph_launches.load(),
              sh.async_allocs.load(), leaked, sh.allocs.load(), sh.frees.load(), sh.kernels.load(),
              sh.host_checks.load(), sh.checked_bytes.load(), sh.capture_errors.load());
  return corruptions == 0 && leaked == 0 ? 0 : 1;
}
