// ~0.3 s per pass on H100 (estimate from bandwidth: 26 GB of weights streamed per token): llama_decode at a 7B-class shape (dim 4096, hidden 11008, 32 layers, 32 heads; fp32, 26 GB of weights), 32 decoded tokens per pass
// The same decode loop, kernels and CPU check as llama_decode.cu, at the shape of a
// 7B-parameter llama: the weights no longer fit in L2 by any measure, so a token's cost is
// the stream of all weights through HBM, and cusafe's share is what its checks add to
// bandwidth-bound matrix-vector products.
#define LLAMA_NAME "llama_decode_7b"
#define LLAMA_DIM 4096
#define LLAMA_HIDDEN 11008
#define LLAMA_LAYERS 32
#define LLAMA_HEADS 32
#include "llama_decode.cu"
