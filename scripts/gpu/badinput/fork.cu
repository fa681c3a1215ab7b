// fork MODE: fork() after CUDA initialisation, with a live allocation in the parent.
//   quiet  the child uses no CUDA and exits (exit handlers run): no cusafe output from
//          it (no leak of the parent's block, no report)
//   cuda   the child calls CUDA: it gets CUDA's own error (the CODE lines are compared
//          with the build without cusafe; CUDA documents cudaErrorInitializationError)
// Either way the parent goes on unaffected: its buffer, kernels and frees work.
#include "check.h"
#include <sys/wait.h>
#include <unistd.h>

int main(int argc, char **argv) {
  const char *mode = argc > 1 ? argv[1] : "quiet";
  const int n = 1000;
  int *a = nullptr;
  CK(cudaMalloc(&a, n * sizeof(int)));
  CK(cudaMemset(a, 0, n * sizeof(int)));
  inc<<<(n + 255) / 256, 256>>>(a, n);
  CK(cudaDeviceSynchronize());
  std::fflush(stdout);
  pid_t child = fork();
  if (child < 0) {
    std::perror("fork");
    return 4;
  }
  if (child == 0) {
    if (!std::strcmp(mode, "cuda")) {
      void *p = nullptr;
      cudaError_t e = cudaMalloc(&p, 400);
      CODE("child_cudaMalloc", e);
      EXPECT("child: cudaMalloc is refused", e != cudaSuccess, "it returned success");
      int h = 0;
      e = cudaMemcpy(&h, a, sizeof h, cudaMemcpyDeviceToHost);
      CODE("child_cudaMemcpy", e);
      EXPECT("child: cudaMemcpy is refused", e != cudaSuccess, "it returned success");
      e = cudaFree(a);
      CODE("child_cudaFree", e);
    }
    std::printf("child exits\n");
    std::fflush(stdout);
    std::exit(0);
  }
  int status = 0;
  waitpid(child, &status, 0);
  EXPECT("the child exited with status 0", WIFEXITED(status) && WEXITSTATUS(status) == 0, "status %#x", status);
  inc<<<(n + 255) / 256, 256>>>(a, n);
  int h[n];
  CK(cudaMemcpy(h, a, sizeof h, cudaMemcpyDeviceToHost));
  EXPECT("the parent's buffer and kernels", h[0] == 2 && h[n - 1] == 2, "h[0]=%d", h[0]);
  CK(cudaFree(a));
  work("the parent goes on");
  return finish();
}
