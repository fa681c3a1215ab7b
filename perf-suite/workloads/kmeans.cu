// ~12 ms per pass on H100 (measured): 1M points x 32 features, 16 clusters, 20 Lloyd iterations (~260 MB read each); 5 passes ~ 60 ms
// Rodinia kmeans: invert_mapping transposes the points to feature-major order, then each
// iteration assigns every point to its nearest centre (centres staged in shared memory,
// membership changes counted as Rodinia's delta) and recomputes the centres. The centre
// update, which Rodinia does on the host, runs on the device here as a deterministic
// two-stage reduction (per-block partial sums, then one block per cluster), so the run is
// bit-exact from run to run. Each pass restarts from the same initial centres (the first k points).
// Verification replays the first and the last iteration on the CPU from the centres the
// GPU recorded for the iteration before, and compares the new centres and memberships.
#include "../harness.h"

#include <vector>

// Fuse a*b+c into FMAs within one expression only. CUDA's default (-ffp-contract=fast)
// also fuses across statements in the backend, which depends on the basic-block layout
// and so gives the plain and the instrumented builds different low-order bits.
#pragma clang fp contract(on)

namespace {

constexpr int NF = 32;          // features per point
constexpr int K = 16;           // clusters
constexpr int ACC_BLOCKS = 1024;
constexpr int LANES = 256 / NF; // points handled side by side in the accumulation kernel
constexpr int UPD_LANES = 32;   // partial-sum rows summed side by side in the centre update

// Point-major [n][NF] -> feature-major [NF][n].
__global__ void invert_mapping(const float *input, float *output, int n) {
  int p = blockIdx.x * blockDim.x + threadIdx.x;
  if (p < n)
    for (int f = 0; f < NF; f++) output[(size_t)f * n + p] = input[(size_t)p * NF + f];
}

__global__ void init_state(const float *centers0, float *centers, int *membership, int *delta,
                           int n, int niter) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) membership[i] = -1;
  if (i < K * NF) centers[i] = centers0[i];
  if (i < niter) delta[i] = 0;
}

// Nearest centre for each point; delta counts the points whose membership changed.
__global__ void assign(const float *feat, const float *centers, int n, int *membership,
                       int *delta) {
  __shared__ float c_sh[K * NF];
  for (int i = threadIdx.x; i < K * NF; i += blockDim.x) c_sh[i] = centers[i];
  __syncthreads();
  int p = blockIdx.x * blockDim.x + threadIdx.x;
  bool changed = false;
  if (p < n) {
    float x[NF];
    for (int f = 0; f < NF; f++) x[f] = feat[(size_t)f * n + p];
    int best = 0;
    float best_d = INFINITY;
    for (int c = 0; c < K; c++) {
      float d = 0.0f;
      for (int f = 0; f < NF; f++) {
        float diff = x[f] - c_sh[c * NF + f];
        d += diff * diff;
      }
      if (d < best_d) {
        best_d = d;
        best = c;
      }
    }
    changed = membership[p] != best;
    membership[p] = best;
  }
  int count = __syncthreads_count(changed);
  if (threadIdx.x == 0 && count > 0) atomicAdd(delta, count);
}

// Per-block sums of the points of each cluster, feature by feature, and cluster sizes.
// Thread (f, lane) walks points lane, lane + LANES, ... of the block's chunk.
__global__ void accumulate(const float *feat, const int *membership, int n, int chunk,
                           float *psum, int *pcount) {
  __shared__ float red[LANES][K][NF];
  __shared__ int cnt_sh[LANES][K];
  int f = threadIdx.x / LANES, lane = threadIdx.x % LANES;
  int begin = blockIdx.x * chunk;
  int end = min(n, begin + chunk);
  float acc[K];
  int cnt[K];
  for (int c = 0; c < K; c++) {
    acc[c] = 0.0f;
    cnt[c] = 0;
  }
  for (int p = begin + lane; p < end; p += LANES) {
    int c = membership[p];
    acc[c] += feat[(size_t)f * n + p];
    if (f == 0) cnt[c]++;
  }
  for (int c = 0; c < K; c++) red[lane][c][f] = acc[c];
  if (f == 0)
    for (int c = 0; c < K; c++) cnt_sh[lane][c] = cnt[c];
  __syncthreads();
  for (int e = threadIdx.x; e < K * NF; e += blockDim.x) {
    int c = e / NF, ff = e % NF;
    float s = 0.0f;
    for (int l = 0; l < LANES; l++) s += red[l][c][ff];
    psum[(size_t)blockIdx.x * K * NF + e] = s;
  }
  if (threadIdx.x < K) {
    int s = 0;
    for (int l = 0; l < LANES; l++) s += cnt_sh[l][threadIdx.x];
    pcount[blockIdx.x * K + threadIdx.x] = s;
  }
}

// One block of UPD_LANES * NF threads per cluster: thread (lane, f) sums the partial sums
// of blocks lane, lane + UPD_LANES, ..., then the lanes are added in a fixed order. New
// centres (empty clusters keep theirs) also go to the history for verification.
__global__ void update_centers(const float *psum, const int *pcount, int nblocks,
                               float *centers, float *history) {
  __shared__ float red[UPD_LANES][NF];
  __shared__ int cred[UPD_LANES];
  int c = blockIdx.x;
  int f = threadIdx.x % NF, lane = threadIdx.x / NF;
  float s = 0.0f;
  int cnt = 0;
  for (int b = lane; b < nblocks; b += UPD_LANES) {
    s += psum[(size_t)b * K * NF + c * NF + f];
    if (f == 0) cnt += pcount[b * K + c];
  }
  red[lane][f] = s;
  if (f == 0) cred[lane] = cnt;
  __syncthreads();
  if (lane == 0) {
    float total = 0.0f;
    int n = 0;
    for (int l = 0; l < UPD_LANES; l++) {
      total += red[l][f];
      n += cred[l];
    }
    int e = c * NF + f;
    float v = n > 0 ? total / (float)n : centers[e];
    centers[e] = v;
    history[e] = v;
  }
}

// CPU: one Lloyd iteration from `centers`: memberships and new centres.
void cpu_iteration(const std::vector<float> &pts, int n, const float *centers,
                   std::vector<int> &member, std::vector<float> &out) {
  std::vector<double> sum(K * NF, 0.0);
  std::vector<int> cnt(K, 0);
  for (int p = 0; p < n; p++) {
    const float *x = &pts[(size_t)p * NF];
    int best = 0;
    float best_d = INFINITY;
    for (int c = 0; c < K; c++) {
      float d = 0.0f;
      for (int f = 0; f < NF; f++) {
        float diff = x[f] - centers[c * NF + f];
        d += diff * diff;
      }
      if (d < best_d) {
        best_d = d;
        best = c;
      }
    }
    member[p] = best;
    cnt[best]++;
    for (int f = 0; f < NF; f++) sum[best * NF + f] += x[f];
  }
  out.resize(K * NF);
  for (int e = 0; e < K * NF; e++) {
    int c = e / NF;
    out[e] = cnt[c] > 0 ? (float)(sum[e] / cnt[c]) : centers[e];
  }
}

} // namespace

int main(int argc, char **argv) {
  perf::Run run(argc, argv, "kmeans", 5);
  const int n = 1 << 20;
  const int niter = 20; // Lloyd iterations per pass

  // Points scattered around K true centres; the initial centres are the first K points.
  std::vector<float> pts((size_t)n * NF);
  {
    std::vector<float> truth(K * NF);
    perf::fill(truth, 91, -5.0f, 5.0f);
    perf::Rng rng(92);
    for (int p = 0; p < n; p++) {
      int c = (int)rng.below(K);
      for (int f = 0; f < NF; f++) pts[(size_t)p * NF + f] = truth[c * NF + f] + rng.uniform(-1.5f, 1.5f);
    }
  }
  std::vector<float> centers0(pts.begin(), pts.begin() + K * NF);

  float *d_pts, *d_feat, *d_centers0, *d_centers, *d_psum, *d_hist;
  int *d_member, *d_delta, *d_pcount;
  CK(cudaMalloc(&d_pts, (size_t)n * NF * sizeof(float)));
  CK(cudaMalloc(&d_feat, (size_t)n * NF * sizeof(float)));
  CK(cudaMalloc(&d_centers0, K * NF * sizeof(float)));
  CK(cudaMalloc(&d_centers, K * NF * sizeof(float)));
  CK(cudaMalloc(&d_psum, (size_t)ACC_BLOCKS * K * NF * sizeof(float)));
  CK(cudaMalloc(&d_pcount, ACC_BLOCKS * K * sizeof(int)));
  CK(cudaMalloc(&d_hist, (size_t)niter * K * NF * sizeof(float)));
  CK(cudaMalloc(&d_member, n * sizeof(int)));
  CK(cudaMalloc(&d_delta, niter * sizeof(int)));
  CK(cudaMemcpy(d_pts, pts.data(), (size_t)n * NF * sizeof(float), cudaMemcpyHostToDevice));
  CK(cudaMemcpy(d_centers0, centers0.data(), K * NF * sizeof(float), cudaMemcpyHostToDevice));

  const int chunk = (int)perf::cdiv(n, ACC_BLOCKS);
  const unsigned pblocks = perf::cdiv(n, 256);
  auto pass = [&] {
    invert_mapping<<<pblocks, 256>>>(d_pts, d_feat, n);
    init_state<<<pblocks, 256>>>(d_centers0, d_centers, d_member, d_delta, n, niter);
    for (int it = 0; it < niter; it++) {
      assign<<<pblocks, 256>>>(d_feat, d_centers, n, d_member, d_delta + it);
      accumulate<<<ACC_BLOCKS, NF * LANES>>>(d_feat, d_member, n, chunk, d_psum, d_pcount);
      update_centers<<<K, UPD_LANES * NF>>>(d_psum, d_pcount, ACC_BLOCKS, d_centers,
                                    d_hist + (size_t)it * K * NF);
    }
  };
  run.warmup(pass);
  run.time(pass);

  std::vector<float> hist((size_t)niter * K * NF);
  std::vector<int> member(n), delta(niter);
  CK(cudaMemcpy(hist.data(), d_hist, hist.size() * sizeof(float), cudaMemcpyDeviceToHost));
  CK(cudaMemcpy(member.data(), d_member, n * sizeof(int), cudaMemcpyDeviceToHost));
  CK(cudaMemcpy(delta.data(), d_delta, niter * sizeof(int), cudaMemcpyDeviceToHost));

  bool ok = true;
  std::vector<int> ref_member(n);
  std::vector<float> ref_centers;
  // First iteration, from the initial centres: every point changes membership (from -1).
  cpu_iteration(pts, n, centers0.data(), ref_member, ref_centers);
  ok &= perf::close(&hist[0], ref_centers.data(), K * NF, 1e-3f, 1e-4f, "centres after iteration 1");
  if (delta[0] != n) {
    std::fprintf(stderr, "kmeans: delta of iteration 1 is %d, want %d\n", delta[0], n);
    ok = false;
  }
  // Last iteration, from the centres the GPU had before it.
  cpu_iteration(pts, n, &hist[(size_t)(niter - 2) * K * NF], ref_member, ref_centers);
  ok &= perf::close(&hist[(size_t)(niter - 1) * K * NF], ref_centers.data(), K * NF, 1e-3f, 1e-4f,
                    "centres after the last iteration");
  size_t differ = 0;
  for (int p = 0; p < n; p++) differ += member[p] != ref_member[p];
  // Near-ties may resolve differently with contracted multiply-adds: allow a handful.
  if (differ > (size_t)n / 10000) {
    std::fprintf(stderr, "kmeans: %zu of %d memberships differ\n", differ, n);
    ok = false;
  }

  CK(cudaFree(d_pts));
  CK(cudaFree(d_feat));
  CK(cudaFree(d_centers0));
  CK(cudaFree(d_centers));
  CK(cudaFree(d_psum));
  CK(cudaFree(d_pcount));
  CK(cudaFree(d_hist));
  CK(cudaFree(d_member));
  CK(cudaFree(d_delta));
  return run.finish(ok, perf::checksum(member));
}
