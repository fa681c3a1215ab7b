// reset MODE: cudaDeviceReset in the middle of the program. Before the reset: allocate,
// launch, check. After it: allocate and launch again (under cusafe: tagged again, so
// cusafe set its windows, runtime page and report page up again). MODE:
//   clean   then free everything: exit 0, no report, no leak (the block live at the
//           reset is not a leak)
//   twice   two resets, allocations between them: as clean
//   report  a kernel reads one element past a post-reset buffer: under cusafe a
//           heap-buffer-overflow report at this file's OOB line (the device report
//           after the reset is delivered), exit 1
//   stale   cudaFree of the pre-reset pointer: under cusafe a report (double-free: the
//           reset freed it), exit 1; without cusafe CUDA's error code
//   leak    the post-reset buffer is not freed: under cusafe exactly one leak (#2 or
//           later), not the pre-reset buffer
#include "check.h"

__global__ void past_end(const int *p, int n, int *out) {
  *out = p[n]; // badinput-oob
}

int main(int argc, char **argv) {
  const char *mode = argc > 1 ? argv[1] : "clean";
  const int n = 1000;
  int *pre = nullptr, *post = nullptr, *out = nullptr;
  CK(cudaMalloc(&pre, n * sizeof(int)));
  CK(cudaMemset(pre, 0, n * sizeof(int)));
  inc<<<(n + 255) / 256, 256>>>(pre, n);
  CK(cudaDeviceSynchronize());
  cudaError_t e = cudaDeviceReset();
  CODE("reset", e);
  EXPECT("cudaDeviceReset", e == cudaSuccess, "returned %d", (int)e);
  if (!std::strcmp(mode, "twice")) {
    work("work between two resets");
    void *mid = nullptr;
    CK(cudaMalloc(&mid, 64));
    e = cudaDeviceReset();
    EXPECT("second cudaDeviceReset", e == cudaSuccess, "returned %d", (int)e);
  }
  e = cudaMalloc(&post, n * sizeof(int));
  EXPECT("cudaMalloc after the reset", e == cudaSuccess, "returned %d", (int)e);
  if (under_cusafe()) EXPECT("tagged again after the reset", tagged(post), "%p", (void *)post);
  EXPECT("a new address", post != pre, "the pre-reset address came back");
  CK(cudaMemset(post, 0, n * sizeof(int)));
  inc<<<(n + 255) / 256, 256>>>(post, n);
  e = cudaDeviceSynchronize();
  int h[n];
  CK(cudaMemcpy(h, post, sizeof h, cudaMemcpyDeviceToHost));
  EXPECT("a kernel after the reset", e == cudaSuccess && h[0] == 1 && h[n - 1] == 1, "sync %d, h[0]=%d", (int)e, h[0]);
  work("more work after the reset");
  if (!std::strcmp(mode, "report")) {
    CK(cudaMalloc(&out, sizeof(int)));
    past_end<<<1, 1>>>(post, n, out);
    e = cudaDeviceSynchronize();
    CODE("sync_after_oob", e);
    if (under_cusafe()) EXPECT("the overflow after the reset was reported", false, "the program went on (sync %d)", (int)e);
    CK(cudaFree(out));
  } else if (!std::strcmp(mode, "stale")) {
    e = cudaFree(pre);
    CODE("free_pre_reset_pointer", e);
    if (under_cusafe()) EXPECT("the stale free was reported", false, "cudaFree returned %d", (int)e);
  } else if (!std::strcmp(mode, "leak")) {
    return finish();
  }
  CK(cudaFree(post));
  return finish();
}
