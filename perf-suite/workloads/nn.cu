// ~22 ms per pass on H100 (measured): 8M records, 64 queries each = distance kernel (96 MB) + two-stage top-10 selection; 6 passes ~ 130 ms
// Rodinia nn: k nearest neighbours of a (lat, lng) query among hurricane records. The
// distance kernel is Rodinia's euclid; the k-selection, which Rodinia does on the host, runs
// on the device here: each thread keeps a sorted local top-k of its strided records, the
// block merges its threads' lists in k argmin rounds (warp shuffles), and one final block
// merges the per-block candidates. Ties are broken by record index, so results are exact.
#include "../harness.h"

#include <algorithm>
#include <climits>
#include <vector>

// Fuse a*b+c into FMAs within one expression only. CUDA's default (-ffp-contract=fast)
// also fuses across statements in the backend, which depends on the basic-block layout
// and so gives the plain and the instrumented builds different low-order bits.
#pragma clang fp contract(on)

namespace {

constexpr int K = 10;           // neighbours per query
constexpr int THREADS = 256;    // threads of the selection blocks
constexpr int SEL_BLOCKS = 512; // blocks of selection stage 1

struct LatLong {
  float lat;
  float lng;
};

__global__ void euclid(const LatLong *locations, float *distances, int n, float lat, float lng) {
  int gid = blockIdx.x * blockDim.x + threadIdx.x;
  if (gid < n) {
    const LatLong *ll = locations + gid;
    distances[gid] = sqrtf((lat - ll->lat) * (lat - ll->lat) + (lng - ll->lng) * (lng - ll->lng));
  }
}

__device__ __forceinline__ bool before(float da, int ia, float db, int ib) {
  return da < db || (da == db && ia < ib);
}

// Block-wide top-K of (dist[i], id(i)) for i = first, first + stride, ... < n, where
// id(i) = ids ? ids[i] : i. Writes K (dist, id) pairs, smallest first, to out_d/out_i.
__device__ void block_topk(const float *dist, const int *ids, int n, int first, int stride,
                           float *out_d, int *out_i) {
  __shared__ float warp_d[THREADS / 32];
  __shared__ int warp_i[THREADS / 32];
  __shared__ int win_i; // index of this round's winner

  float bd[K];
  int bi[K];
  for (int k = 0; k < K; k++) {
    bd[k] = INFINITY;
    bi[k] = INT_MAX;
  }
  for (int i = first; i < n; i += stride) {
    float d = dist[i];
    int id = ids ? ids[i] : i;
    if (before(d, id, bd[K - 1], bi[K - 1])) {
      int p = K - 1;
      while (p > 0 && before(d, id, bd[p - 1], bi[p - 1])) {
        bd[p] = bd[p - 1];
        bi[p] = bi[p - 1];
        p--;
      }
      bd[p] = d;
      bi[p] = id;
    }
  }

  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  int head = 0;
  for (int r = 0; r < K; r++) {
    float d = head < K ? bd[head] : INFINITY;
    int id = head < K ? bi[head] : INT_MAX;
    for (int off = 16; off > 0; off >>= 1) {
      float od = __shfl_xor_sync(0xffffffffu, d, off);
      int oi = __shfl_xor_sync(0xffffffffu, id, off);
      if (before(od, oi, d, id)) {
        d = od;
        id = oi;
      }
    }
    if (lane == 0) {
      warp_d[warp] = d;
      warp_i[warp] = id;
    }
    __syncthreads();
    if (warp == 0) {
      d = lane < THREADS / 32 ? warp_d[lane] : INFINITY;
      id = lane < THREADS / 32 ? warp_i[lane] : INT_MAX;
      for (int off = 16; off > 0; off >>= 1) {
        float od = __shfl_xor_sync(0xffffffffu, d, off);
        int oi = __shfl_xor_sync(0xffffffffu, id, off);
        if (before(od, oi, d, id)) {
          d = od;
          id = oi;
        }
      }
      if (lane == 0) {
        win_i = id;
        out_d[r] = d;
        out_i[r] = id;
      }
    }
    __syncthreads();
    // Ids are unique, so exactly one thread owns the winner (none once all are used up).
    if (head < K && win_i != INT_MAX && bi[head] == win_i) head++;
    __syncthreads(); // win_i and warp_* are rewritten in the next round
  }
}

__global__ void topk_partial(const float *dist, int n, float *cand_d, int *cand_i) {
  block_topk(dist, nullptr, n, blockIdx.x * blockDim.x + threadIdx.x, gridDim.x * blockDim.x,
             cand_d + blockIdx.x * K, cand_i + blockIdx.x * K);
}

__global__ void topk_final(const float *cand_d, const int *cand_i, int n, float *out_d,
                           int *out_i) {
  block_topk(cand_d, cand_i, n, threadIdx.x, blockDim.x, out_d, out_i);
}

} // namespace

int main(int argc, char **argv) {
  perf::Run run(argc, argv, "nn", 6);
  const int n = 1 << 23;
  const int queries = 64;

  std::vector<LatLong> rec(n);
  {
    perf::Rng rng(41);
    for (auto &r : rec) {
      r.lat = rng.uniform(-90.0f, 90.0f);
      r.lng = rng.uniform(-180.0f, 180.0f);
    }
  }
  std::vector<LatLong> qs(queries);
  {
    perf::Rng rng(42);
    for (auto &q : qs) {
      q.lat = rng.uniform(-90.0f, 90.0f);
      q.lng = rng.uniform(-180.0f, 180.0f);
    }
  }

  LatLong *d_rec;
  float *d_dist, *d_cand_d, *d_out_d;
  int *d_cand_i, *d_out_i;
  CK(cudaMalloc(&d_rec, n * sizeof(LatLong)));
  CK(cudaMalloc(&d_dist, n * sizeof(float)));
  CK(cudaMalloc(&d_cand_d, SEL_BLOCKS * K * sizeof(float)));
  CK(cudaMalloc(&d_cand_i, SEL_BLOCKS * K * sizeof(int)));
  CK(cudaMalloc(&d_out_d, queries * K * sizeof(float)));
  CK(cudaMalloc(&d_out_i, queries * K * sizeof(int)));
  CK(cudaMemcpy(d_rec, rec.data(), n * sizeof(LatLong), cudaMemcpyHostToDevice));

  auto pass = [&] {
    for (int q = 0; q < queries; q++) {
      euclid<<<perf::cdiv(n, 256), 256>>>(d_rec, d_dist, n, qs[q].lat, qs[q].lng);
      topk_partial<<<SEL_BLOCKS, THREADS>>>(d_dist, n, d_cand_d, d_cand_i);
      topk_final<<<1, THREADS>>>(d_cand_d, d_cand_i, SEL_BLOCKS * K, d_out_d + q * K,
                                 d_out_i + q * K);
    }
  };
  run.warmup(pass);
  run.time(pass);

  std::vector<float> out_d(queries * K);
  std::vector<int> out_i(queries * K);
  CK(cudaMemcpy(out_d.data(), d_out_d, out_d.size() * sizeof(float), cudaMemcpyDeviceToHost));
  CK(cudaMemcpy(out_i.data(), d_out_i, out_i.size() * sizeof(int), cudaMemcpyDeviceToHost));

  // CPU reference on every 8th query: the k smallest (distance, index) pairs. Distances
  // may differ in the last bits (contracted multiply-adds), so compare them with a
  // tolerance and check that each returned record really lies at the returned distance.
  bool ok = true;
  std::vector<std::pair<float, int>> all(n);
  for (int q = 0; q < queries; q += 8) {
    const float la = qs[q].lat, lo = qs[q].lng;
    for (int i = 0; i < n; i++) {
      float dl = la - rec[i].lat, dg = lo - rec[i].lng;
      all[i] = {std::sqrt(dl * dl + dg * dg), i};
    }
    std::partial_sort(all.begin(), all.begin() + K, all.end());
    std::vector<float> want(K), got(K), at(K);
    for (int k = 0; k < K; k++) {
      want[k] = all[k].first;
      got[k] = out_d[q * K + k];
      int id = out_i[q * K + k];
      if (id < 0 || id >= n) {
        std::fprintf(stderr, "query %d: neighbour %d has index %d\n", q, k, id);
        ok = false;
        at[k] = -1.0f;
        continue;
      }
      float dl = la - rec[id].lat, dg = lo - rec[id].lng;
      at[k] = std::sqrt(dl * dl + dg * dg);
      for (int k2 = 0; k2 < k; k2++)
        if (out_i[q * K + k2] == id) {
          std::fprintf(stderr, "query %d: index %d returned twice\n", q, id);
          ok = false;
        }
    }
    ok &= perf::close(got.data(), want.data(), K, 1e-4f, 1e-5f, "knn distance");
    ok &= perf::close(at.data(), got.data(), K, 1e-4f, 1e-5f, "distance of returned record");
  }

  CK(cudaFree(d_rec));
  CK(cudaFree(d_dist));
  CK(cudaFree(d_cand_d));
  CK(cudaFree(d_cand_i));
  CK(cudaFree(d_out_d));
  CK(cudaFree(d_out_i));
  return run.finish(ok, perf::checksum(out_i));
}
