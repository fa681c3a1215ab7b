// The perf suite's shared harness: error checks, argument parsing, cudaEvent timing of
// the kernel region only, peak device memory, output checksums and the one result line
// the runner parses.
//
// Per-kernel times: a workload may call run.mark("kernel") after each launch; run with
// --breakdown, time() then adds every marked launch's GPU time to its kernel and the
// output gets a KERNEL line per kernel before the result line (llama_decode does).
//
// Every workload's main():
//   perf::Run run(argc, argv, "gemm", /*default_iters=*/5);
//   ... allocate, initialise, copy in (untimed) ...
//   run.warmup([&] { launch(); });          // one untimed pass (JIT, caches)
//   run.time([&] { launch(); });            // run.iters() passes between two cudaEvents
//   ... copy out (untimed), compare with a CPU reference ...
//   return run.finish(ok, checksum_of(out));
//
// The result line (stdout, one line, parsed by scripts/gpu/run-perf.sh):
//   PERF workload=gemm iters=5 kernel_ms=12.345678 per_iter_ms=2.469136 verified=1
//        checksum=0x1234abcd peak_mem_mib=96.0 [metric=tokens_per_s value=123.4]
// Exit status: 0 when verified, 1 when the output is wrong, 3 on a CUDA error.
#pragma once
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <cuda_runtime.h>
#include <map>
#include <string>
#include <vector>

#include "../examples/common.h" // CK(call): exits naming the failing CUDA call

namespace perf {

/// Deterministic pseudo-random numbers (xorshift64*), the same on every machine.
struct Rng {
  uint64_t s;
  explicit Rng(uint64_t seed) : s(seed * 0x9E3779B97F4A7C15ull + 1) {}
  uint64_t next() {
    s ^= s >> 12;
    s ^= s << 25;
    s ^= s >> 27;
    return s * 0x2545F4914F6CDD1Dull;
  }
  /// Uniform in [lo, hi).
  float uniform(float lo, float hi) {
    return lo + (hi - lo) * (float)((next() >> 40) * (1.0 / 16777216.0));
  }
  /// Uniform integer in [0, n).
  uint32_t below(uint32_t n) { return (uint32_t)(next() % n); }
};

/// Fills a host vector with uniform floats in [lo, hi).
inline void fill(std::vector<float> &v, uint64_t seed, float lo = -1.0f, float hi = 1.0f) {
  Rng r(seed);
  for (auto &x : v) x = r.uniform(lo, hi);
}

/// FNV-1a over the bytes of a host buffer: the plain and cusafe builds must agree.
inline uint64_t checksum(const void *p, size_t bytes) {
  const unsigned char *b = (const unsigned char *)p;
  uint64_t h = 1469598103934665603ull;
  for (size_t i = 0; i < bytes; i++) h = (h ^ b[i]) * 1099511628211ull;
  return h;
}
template <class T> uint64_t checksum(const std::vector<T> &v) {
  return checksum(v.data(), v.size() * sizeof(T));
}

/// Relative-or-absolute float comparison; prints the first few mismatches.
inline bool close(const float *got, const float *want, size_t n, float rtol = 1e-3f,
                  float atol = 1e-4f, const char *what = "output") {
  size_t bad = 0;
  for (size_t i = 0; i < n; i++) {
    float g = got[i], w = want[i];
    if (!(std::fabs(g - w) <= atol + rtol * std::fabs(w))) {
      if (bad < 5) std::fprintf(stderr, "%s[%zu]: got %g, want %g\n", what, i, g, w);
      bad++;
    }
  }
  if (bad) std::fprintf(stderr, "%s: %zu of %zu elements differ\n", what, bad, n);
  return bad == 0;
}

/// One workload run: options, timing, peak memory, the result line.
class Run {
public:
  /// Parses `--iters N` (timed passes) and `--quick` (one timed pass: for slow
  /// tools such as compute-sanitizer; per-pass times stay comparable).
  Run(int argc, char **argv, const char *name, int default_iters)
      : name_(name), iters_(default_iters) {
    for (int i = 1; i < argc; i++) {
      if (!std::strcmp(argv[i], "--iters") && i + 1 < argc) {
        iters_ = std::atoi(argv[++i]);
      } else if (!std::strcmp(argv[i], "--quick")) {
        iters_ = 1;
      } else if (!std::strcmp(argv[i], "--breakdown")) {
        breakdown_ = true;
      } else {
        std::fprintf(stderr, "%s: unknown argument %s; use --iters N, --quick or --breakdown\n",
                     name, argv[i]);
        std::exit(2);
      }
    }
    if (iters_ < 1) {
      std::fprintf(stderr, "%s: --iters must be at least 1\n", name);
      std::exit(2);
    }
    CK(cudaFree(nullptr)); // create the context before measuring memory
    size_t free_b, total_b;
    CK(cudaMemGetInfo(&free_b, &total_b));
    base_used_ = total_b - free_b;
    CK(cudaEventCreate(&start_));
    CK(cudaEventCreate(&stop_));
  }

  /// Timed passes to make.
  int iters() const { return iters_; }

  /// Runs one untimed pass and waits for it.
  template <class F> void warmup(F f) {
    f();
    CK(cudaGetLastError());
    CK(cudaDeviceSynchronize());
    sample_memory();
  }

  /// Runs iters() passes between two events on the default stream; adds their time.
  /// With `--breakdown`, each pass also waits for its end and adds the time of every
  /// launch marked with mark() to that kernel's sum (printed by finish()).
  template <class F> void time(F f) {
    CK(cudaEventRecord(start_));
    for (int i = 0; i < iters_; i++) {
      timing_ = breakdown_;
      mark(nullptr);
      f();
      if (timing_) add_marked();
      timing_ = false;
    }
    CK(cudaEventRecord(stop_));
    CK(cudaGetLastError());
    CK(cudaEventSynchronize(stop_));
    float ms = 0;
    CK(cudaEventElapsedTime(&ms, start_, stop_));
    kernel_ms_ += ms;
    sample_memory();
  }

  /// With `--breakdown`, inside time() (not in warmup()): records an event after the
  /// launch just made, whose kernel is `kernel` (nullptr: the start of a pass); else
  /// nothing. A launch's time is the span from the event before it to the one after
  /// it, on the GPU's clock (a gap while the GPU waits for the host counts too). The
  /// events and the wait after each pass slow the pass: a --breakdown run's PERF line
  /// is not comparable with a normal run's; compare its KERNEL lines between builds.
  void mark(const char *kernel) {
    if (!timing_) return;
    if (marked_ == events_.size()) {
      events_.emplace_back();
      CK(cudaEventCreate(&events_.back()));
    }
    CK(cudaEventRecord(events_[marked_]));
    kernels_.resize(marked_ + 1);
    kernels_[marked_++] = kernel;
  }

  /// Adds a time measured by the workload itself (for workloads whose passes need
  /// host work between kernels, e.g. bfs's frontier test): time only the kernels.
  void add_ms(float ms) { kernel_ms_ += ms; }
  cudaEvent_t start_event() const { return start_; }
  cudaEvent_t stop_event() const { return stop_; }

  /// Records device memory in use now (called by warmup/time; call it at other peaks).
  void sample_memory() {
    size_t free_b, total_b;
    CK(cudaMemGetInfo(&free_b, &total_b));
    size_t now = total_b - free_b;
    size_t used = now > base_used_ ? now - base_used_ : 0;
    if (used > peak_) peak_ = used;
  }

  /// An extra figure for the result line (e.g. "tokens_per_s").
  void metric(const char *key, double value) {
    metric_key_ = key;
    metric_value_ = value;
  }

  /// Prints the result line and returns the exit status for main(); with
  /// `--breakdown`, first one line per marked kernel:
  ///   KERNEL workload=NAME kernel=K launches=N ms_per_iter=T
  int finish(bool verified, uint64_t sum) {
    for (const auto &[kernel, t] : breakdown_ms_)
      std::printf("KERNEL workload=%s kernel=%s launches=%d ms_per_iter=%.6f\n", name_,
                  kernel.c_str(), t.launches / iters_, t.ms / iters_);
    std::printf("PERF workload=%s iters=%d kernel_ms=%.6f per_iter_ms=%.6f verified=%d "
                "checksum=0x%016llx peak_mem_mib=%.1f",
                name_, iters_, kernel_ms_, kernel_ms_ / iters_, verified ? 1 : 0,
                (unsigned long long)sum, peak_ / 1048576.0);
    if (metric_key_) std::printf(" metric=%s value=%.3f", metric_key_, metric_value_);
    std::printf("\n");
    if (!verified)
      std::fprintf(stderr, "%s: output does not match the reference (see above)\n", name_);
    return verified ? 0 : 1;
  }

private:
  /// Waits for the pass marked since the last call and adds each launch's time.
  void add_marked() {
    CK(cudaEventSynchronize(events_[marked_ - 1]));
    for (size_t i = 1; i < marked_; i++) {
      if (!kernels_[i]) continue;
      float ms = 0;
      CK(cudaEventElapsedTime(&ms, events_[i - 1], events_[i]));
      Span &t = breakdown_ms_[kernels_[i]];
      t.ms += ms;
      t.launches++;
    }
    marked_ = 0;
  }

  struct Span {
    double ms = 0;
    int launches = 0;
  };
  const char *name_;
  int iters_;
  float kernel_ms_ = 0;
  size_t base_used_ = 0, peak_ = 0;
  cudaEvent_t start_, stop_;
  const char *metric_key_ = nullptr;
  double metric_value_ = 0;
  bool breakdown_ = false, timing_ = false;
  std::vector<cudaEvent_t> events_;
  std::vector<const char *> kernels_;
  size_t marked_ = 0;
  std::map<std::string, Span> breakdown_ms_;
};

/// Ceiling division for grid sizes.
inline unsigned cdiv(size_t a, size_t b) { return (unsigned)((a + b - 1) / b); }

} // namespace perf
