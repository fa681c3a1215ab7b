// Correct: pointers stored in device memory and loaded back.
// - a jagged array: one allocation per row, the row pointers in a device array;
// - a linked list threaded through a node pool, `next` pointers written by a kernel
//   (computed on the device from the pool base) and followed by another kernel;
// - a descriptor struct of pointers uploaded with cudaMemcpy and read on the device.
#include "../../examples/common.h"
#include <vector>

struct Node {
  int value;
  Node *next;
};

struct Desc {
  float **rows;
  const int *lens;
  int count;
  Node *head;
};

__global__ void link(Node *pool, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    pool[i].value = i;
    pool[i].next = i + 1 < n ? &pool[i + 1] : nullptr;
  }
}

__global__ void use(const Desc *d, float *row_sums, int *list_sum) {
  int r = blockIdx.x * blockDim.x + threadIdx.x;
  if (r < d->count) {
    const float *row = d->rows[r];
    float acc = 0;
    for (int c = 0; c < d->lens[r]; ++c) acc += row[c];
    row_sums[r] = acc;
  }
  if (r == 0) {
    int s = 0;
    for (const Node *p = d->head; p; p = p->next) s += p->value;
    *list_sum = s;
  }
}

int main() {
  const int rows = 100, nodes = 5000;
  std::vector<float *> rp(rows);
  std::vector<int> lens(rows);
  for (int r = 0; r < rows; ++r) {
    lens[r] = 1 + (r * 37) % 300;
    CK(cudaMalloc(&rp[r], lens[r] * sizeof(float)));
    std::vector<float> h(lens[r], 1.0f);
    CK(cudaMemcpy(rp[r], h.data(), lens[r] * sizeof(float), cudaMemcpyHostToDevice));
  }
  Desc d{nullptr, nullptr, rows, nullptr};
  int *dlens, *list_sum;
  float *sums;
  Desc *dd;
  CK(cudaMalloc(&d.rows, rows * sizeof(float *)));
  CK(cudaMalloc(&dlens, rows * sizeof(int)));
  CK(cudaMalloc(&d.head, nodes * sizeof(Node)));
  CK(cudaMalloc(&sums, rows * sizeof(float)));
  CK(cudaMalloc(&list_sum, sizeof(int)));
  CK(cudaMalloc(&dd, sizeof(Desc)));
  d.lens = dlens;
  CK(cudaMemcpy(d.rows, rp.data(), rows * sizeof(float *), cudaMemcpyHostToDevice));
  CK(cudaMemcpy(dlens, lens.data(), rows * sizeof(int), cudaMemcpyHostToDevice));
  CK(cudaMemcpy(dd, &d, sizeof(Desc), cudaMemcpyHostToDevice));
  link<<<(nodes + 255) / 256, 256>>>(d.head, nodes);
  use<<<1, 128>>>(dd, sums, list_sum);
  std::vector<float> hs(rows);
  int ls = 0;
  CK(cudaMemcpy(hs.data(), sums, rows * sizeof(float), cudaMemcpyDeviceToHost));
  CK(cudaMemcpy(&ls, list_sum, sizeof ls, cudaMemcpyDeviceToHost));
  double total = 0;
  for (float v : hs) total += v;
  std::printf("jagged total %.0f, list sum %d\n", total, ls);
  for (float *p : rp) CK(cudaFree(p));
  CK(cudaFree(d.rows));
  CK(cudaFree(dlens));
  CK(cudaFree(d.head));
  CK(cudaFree(sums));
  CK(cudaFree(list_sum));
  CK(cudaFree(dd));
  return 0;
}
