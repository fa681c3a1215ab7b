// Correct: device printf with local variables and local arrays as arguments
// (vprintf receives a pointer to a local argument buffer), a local char array printed
// with %s, and a local array filled by a loop and printed element by element. One
// thread prints, so the output order is fixed.
#include "../../examples/common.h"

__device__ __noinline__ void label(char *buf, int id) {
  const char *names[] = {"alpha", "beta", "gamma", "delta"};
  const char *s = names[id % 4];
  int k = 0;
  while (s[k]) {
    buf[k] = s[k];
    ++k;
  }
  buf[k++] = '-';
  buf[k++] = char('0' + id % 10);
  buf[k] = 0;
}

__global__ void report(const int *data, int n) {
  if (blockIdx.x != 0 || threadIdx.x != 0) return;
  int hist[4] = {0, 0, 0, 0};
  for (int i = 0; i < n; ++i) hist[data[i] & 3]++;
  char name[16];
  for (int b = 0; b < 4; ++b) {
    label(name, b + 10 * hist[b] % 7);
    printf("bin %d (%s): %d of %d, %.2f%%\n", b, name, hist[b], n, 100.0 * hist[b] / n);
  }
  long long big = 1LL << 40;
  double ratio = double(hist[0]) / (hist[1] + 1);
  printf("mixed: %lld %f %c %s %u\n", big, ratio, 'x', name, (unsigned)hist[3]);
}

int main() {
  const int n = 1000;
  int h[n];
  for (int i = 0; i < n; ++i) h[i] = (i * i + 3) % 11;
  int *d;
  CK(cudaMalloc(&d, sizeof h));
  CK(cudaMemcpy(d, h, sizeof h, cudaMemcpyHostToDevice));
  report<<<2, 64>>>(d, n);
  CK(cudaDeviceSynchronize());
  std::printf("host: done\n");
  CK(cudaFree(d));
  return 0;
}
