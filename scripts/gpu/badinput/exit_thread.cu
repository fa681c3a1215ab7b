// exit_thread MODE: exit() from another thread while a kernel runs and the main thread is
// inside a hooked CUDA call. The kernel (about 10 s) is launched through a CUDA graph
// (cudaGraphLaunch is not hooked, so cusafe does not wait for it before a free); the main
// thread then frees a large buffer, and cusafe's free waits for the device while it
// holds its allocator. 2 s later another thread calls exit(0). Expected: the process
// ends (no deadlock in cusafe's exit path; run-badinput.sh gives it 60 s), with
//   idle    exit status 0 and cusafe's note that the leak check was skipped
//   report  (run with halt_on_error=0 and json_path) the kernel first reads one element
//           past `small` (built with --cusafe-recover, it goes on): the report is
//           printed and in the JSON file at exit, exit status 1
#include "check.h"
#include <pthread.h>
#include <unistd.h>

__global__ void spin(const int *p, int n, int oob, int *out) {
  if (oob) *out = p[n]; // badinput-oob
  for (int i = 0; i < 10000; i++) __nanosleep(1000000);
}

static void *exiter(void *) {
  sleep(2);
  std::printf("exiting\n");
  std::fflush(stdout);
  std::exit(0);
}

int main(int argc, char **argv) {
  const char *mode = argc > 1 ? argv[1] : "idle";
  int oob = !std::strcmp(mode, "report");
  const int n = 100;
  int *small = nullptr, *out = nullptr;
  void *big = nullptr;
  CK(cudaMalloc(&small, n * sizeof(int)));
  CK(cudaMalloc(&out, sizeof(int)));
  CK(cudaMalloc(&big, 64 << 20));
  cudaStream_t s;
  CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  cudaGraph_t g;
  CK(cudaGraphCreate(&g, 0));
  int nn = n;
  void *args[] = {&small, &nn, &oob, &out};
  cudaKernelNodeParams kp = {};
  kp.func = (void *)spin;
  kp.gridDim = dim3(1);
  kp.blockDim = dim3(1);
  kp.kernelParams = args;
  cudaGraphNode_t node;
  CK(cudaGraphAddKernelNode(&node, g, nullptr, 0, &kp));
  cudaGraphExec_t exec;
  CK(cudaGraphInstantiate(&exec, g, 0));
  CK(cudaDeviceSynchronize());
  CK(cudaGraphLaunch(exec, s));
  sleep(1); // the kernel runs (and has reported)
  pthread_t t;
  pthread_create(&t, nullptr, exiter, nullptr);
  std::printf("freeing\n");
  std::fflush(stdout);
  cudaError_t e = cudaFree(big);
  // Reached only if the free returns before the other thread's exit ends the process.
  std::printf("cudaFree returned %d before exit\n", (int)e);
  pthread_join(t, nullptr);
  return 0;
}
