// ~1.2 ms per pass on H100 (measured): 4M-node random graph (2..14 out-edges, ~33.5M edges), ~10 levels x 2 kernels; 20 passes ~ 23 ms
// Rodinia bfs: level-synchronous BFS with a frontier mask, an "updating" mask and a visited
// mask; kernel 1 expands the frontier (pointer chasing through the node and edge arrays),
// kernel 2 commits the newly found nodes. The number of levels is known in advance (from
// the CPU reference), so each pass runs a fixed sequence of launches with no host check;
// the device-side "over" flag is still maintained as in Rodinia and checked at the end.
#include "../harness.h"

#include <vector>

namespace {

struct Node {
  int start;  // first edge in the edge list
  int degree; // number of out-edges
};

__global__ void bfs_reset(bool *mask, bool *updating, bool *visited, int *cost, int n,
                          int source) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    bool s = (i == source);
    mask[i] = s;
    updating[i] = false;
    visited[i] = s;
    cost[i] = s ? 0 : -1;
  }
}

// Kernel 1: every frontier node marks its unvisited neighbours.
__global__ void bfs_expand(const Node *nodes, const int *edges, bool *mask, bool *updating,
                           const bool *visited, int *cost, int *over, int n) {
  int tid = blockIdx.x * blockDim.x + threadIdx.x;
  if (tid == 0) *over = 0; // kernel 2 of this level sets it again
  if (tid < n && mask[tid]) {
    mask[tid] = false;
    Node nd = nodes[tid];
    int next = cost[tid] + 1;
    for (int e = nd.start; e < nd.start + nd.degree; e++) {
      int id = edges[e];
      if (!visited[id]) {
        cost[id] = next; // every writer stores the same value
        updating[id] = true;
      }
    }
  }
}

// Kernel 2: newly reached nodes become the next frontier.
__global__ void bfs_commit(bool *mask, bool *updating, bool *visited, int *over, int n) {
  int tid = blockIdx.x * blockDim.x + threadIdx.x;
  if (tid < n && updating[tid]) {
    mask[tid] = true;
    visited[tid] = true;
    *over = 1;
    updating[tid] = false;
  }
}

} // namespace

int main(int argc, char **argv) {
  perf::Run run(argc, argv, "bfs", 20);
  const int n = 1 << 22;
  const int source = 0;

  // Random directed graph in CSR form (Rodinia's graphgen style: random degree, random
  // destinations).
  std::vector<Node> h_nodes(n);
  std::vector<int> h_edges;
  h_edges.reserve((size_t)n * 8 + 1024);
  perf::Rng rng(7);
  for (int i = 0; i < n; i++) {
    int deg = 2 + (int)rng.below(13);
    h_nodes[i].start = (int)h_edges.size();
    h_nodes[i].degree = deg;
    for (int d = 0; d < deg; d++) h_edges.push_back((int)rng.below(n));
  }
  const size_t n_edges = h_edges.size();

  // CPU reference (queue BFS), also gives the number of levels to run.
  std::vector<int> ref_cost(n, -1);
  {
    std::vector<int> queue(n);
    size_t head = 0, tail = 0;
    ref_cost[source] = 0;
    queue[tail++] = source;
    while (head < tail) {
      int u = queue[head++];
      const Node &nd = h_nodes[u];
      for (int e = nd.start; e < nd.start + nd.degree; e++) {
        int v = h_edges[e];
        if (ref_cost[v] < 0) {
          ref_cost[v] = ref_cost[u] + 1;
          queue[tail++] = v;
        }
      }
    }
  }
  int max_depth = 0;
  for (int i = 0; i < n; i++)
    if (ref_cost[i] > max_depth) max_depth = ref_cost[i];
  const int levels = max_depth + 1; // the last level finds nothing new

  Node *d_nodes;
  int *d_edges, *d_cost, *d_over;
  bool *d_mask, *d_updating, *d_visited;
  CK(cudaMalloc(&d_nodes, n * sizeof(Node)));
  CK(cudaMalloc(&d_edges, n_edges * sizeof(int)));
  CK(cudaMalloc(&d_cost, n * sizeof(int)));
  CK(cudaMalloc(&d_over, sizeof(int)));
  CK(cudaMalloc(&d_mask, n * sizeof(bool)));
  CK(cudaMalloc(&d_updating, n * sizeof(bool)));
  CK(cudaMalloc(&d_visited, n * sizeof(bool)));
  CK(cudaMemcpy(d_nodes, h_nodes.data(), n * sizeof(Node), cudaMemcpyHostToDevice));
  CK(cudaMemcpy(d_edges, h_edges.data(), n_edges * sizeof(int), cudaMemcpyHostToDevice));
  CK(cudaMemset(d_over, 0, sizeof(int)));

  const int threads = 256;
  const unsigned blocks = perf::cdiv(n, threads);
  auto pass = [&] {
    bfs_reset<<<blocks, threads>>>(d_mask, d_updating, d_visited, d_cost, n, source);
    for (int l = 0; l < levels; l++) {
      bfs_expand<<<blocks, threads>>>(d_nodes, d_edges, d_mask, d_updating, d_visited, d_cost,
                                      d_over, n);
      bfs_commit<<<blocks, threads>>>(d_mask, d_updating, d_visited, d_over, n);
    }
  };
  run.warmup(pass);
  run.time(pass);

  std::vector<int> cost(n);
  int over = -1;
  CK(cudaMemcpy(cost.data(), d_cost, n * sizeof(int), cudaMemcpyDeviceToHost));
  CK(cudaMemcpy(&over, d_over, sizeof(int), cudaMemcpyDeviceToHost));

  bool ok = true;
  if (over != 0) {
    std::fprintf(stderr, "bfs: the last level still changed the frontier (over=%d)\n", over);
    ok = false;
  }
  size_t bad = 0, reached = 0;
  for (int i = 0; i < n; i++) {
    if (ref_cost[i] >= 0) reached++;
    if (cost[i] != ref_cost[i]) {
      if (bad < 5) std::fprintf(stderr, "cost[%d]: got %d, want %d\n", i, cost[i], ref_cost[i]);
      bad++;
    }
  }
  if (bad) {
    std::fprintf(stderr, "bfs: %zu of %d costs differ\n", bad, n);
    ok = false;
  }
  if (reached < (size_t)n / 2) {
    std::fprintf(stderr, "bfs: only %zu nodes reachable; graph generation is off\n", reached);
    ok = false;
  }

  CK(cudaFree(d_nodes));
  CK(cudaFree(d_edges));
  CK(cudaFree(d_cost));
  CK(cudaFree(d_over));
  CK(cudaFree(d_mask));
  CK(cudaFree(d_updating));
  CK(cudaFree(d_visited));
  return run.finish(ok, perf::checksum(cost));
}
