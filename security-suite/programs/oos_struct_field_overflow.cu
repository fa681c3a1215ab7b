// Particles are structs with a fixed 3-slot position array followed by the velocity.
// A 4-D variant of the integrator writes a fourth position component, which lands in
// the velocity field of the same struct: the access stays inside the allocation.
// Bug: heap-buffer-overflow in spirit (intra-object: one member into the next), WRITE.
// Out of scope: bounds are tracked per allocation, not per struct member.
#include "../../examples/common.h"
#include <vector>

struct Particle {
  float pos[3];
  float vel[3];
  int id;
};

__global__ void integrate(Particle *p, int n, int dims, float dt) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  for (int d = 0; d < dims; ++d) p[i].pos[d] += dt * p[i].vel[d]; // cusafe-expect: heap-buffer-overflow
}

int main() {
  const int n = 1024, dims = 4; // the data set is 3-D
  std::vector<Particle> h(n);
  for (int i = 0; i < n; ++i) h[i] = Particle{{float(i), 0, 0}, {1, 2, 3}, i};
  Particle *d;
  CK(cudaMalloc(&d, n * sizeof(Particle)));
  CK(cudaMemcpy(d, h.data(), n * sizeof(Particle), cudaMemcpyHostToDevice));
  integrate<<<n / 256, 256>>>(d, n, dims, 0.5f);
  CK(cudaDeviceSynchronize());
  CK(cudaMemcpy(h.data(), d, n * sizeof(Particle), cudaMemcpyDeviceToHost));
  std::printf("p[10].pos = (%.1f %.1f %.1f), vel.x = %.1f\n", h[10].pos[0], h[10].pos[1],
              h[10].pos[2], h[10].vel[0]);
  CK(cudaFree(d));
  return 0;
}
