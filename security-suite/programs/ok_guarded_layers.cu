// Correct: a layer walk whose read of the layer above is guarded by `k < top - 1`, so it
// runs on the loop's leading trips only, and on none of them when top <= 1. The pass
// checks such a read once per loop over the trips that make it; this program makes
// sure that check covers exactly those trips:
// - top = nz: the read runs on every trip but the last (on the last, layer k + 1 would
//   be one past the end of the buffer);
// - a one-layer buffer with top = 1, and top = 0: the read runs on no trip, and on the
//   first trip its address (layer 1) lies past the end of the buffer. A check that
//   stood for one trip too many, or for the first trip when there is none, reports it.
#include "../../examples/common.h"
#include <cmath>
#include <vector>

__global__ void smooth_layers(const float *in, float *out, int nx, int nz, int top) {
  int c = blockIdx.x * blockDim.x + threadIdx.x;
  if (c >= nx) return;
  float acc = 0.0f;
  // Kept rolled, as in a loop whose body is too big to unroll (hotspot3d's layers).
#pragma unroll 1
  for (int k = 0; k < nz; k++) {
    float mid = in[k * nx + c];
    float above = k < top - 1 ? in[(k + 1) * nx + c] : mid;
    acc += 0.5f * (mid + above);
  }
  out[c] = acc;
}

// The same sum on the host, for the launch's nx, nz and top.
static float expect(const std::vector<float> &h, int c, int nx, int nz, int top) {
  float acc = 0.0f;
  for (int k = 0; k < nz; k++) {
    float mid = h[(size_t)k * nx + c];
    float above = k < top - 1 ? h[(size_t)(k + 1) * nx + c] : mid;
    acc += 0.5f * (mid + above);
  }
  return acc;
}

// Runs one launch on a fresh buffer of nz layers and compares every column with the host.
static int run(int nx, int nz, int top) {
  std::vector<float> h((size_t)nx * nz);
  for (size_t i = 0; i < h.size(); ++i) h[i] = (float)(i % 97) * 0.25f;
  float *in, *out;
  CK(cudaMalloc(&in, h.size() * sizeof(float)));
  CK(cudaMalloc(&out, nx * sizeof(float)));
  CK(cudaMemcpy(in, h.data(), h.size() * sizeof(float), cudaMemcpyHostToDevice));
  smooth_layers<<<(nx + 127) / 128, 128>>>(in, out, nx, nz, top);
  std::vector<float> got(nx);
  CK(cudaMemcpy(got.data(), out, nx * sizeof(float), cudaMemcpyDeviceToHost));
  int bad = 0;
  for (int c = 0; c < nx; ++c) bad += std::fabs(got[c] - expect(h, c, nx, nz, top)) > 1e-3f;
  CK(cudaFree(in));
  CK(cudaFree(out));
  std::printf("nx %d, nz %d, top %d: %d/%d columns differ from the host\n", nx, nz, top, bad, nx);
  return bad;
}

int main() {
  int bad = run(1000, 8, 8);  // leading trips: every trip but the last
  bad += run(1000, 1, 1);     // one layer: no trip reads the layer above
  bad += run(1000, 4, 0);     // top 0: no trip either
  return bad ? 1 : 0;
}
