// cuBLASLt's algorithm choices for the GEMMs of a Command R7B step, timed: for each shape (the
// merged QKV + gate + up, the o and the down projections adding into the f32 residual stream
// (beta 1), the logits; m rows of activations), the
// heuristic's first choice against the fastest of the up to 32 it offers, with the descriptors
// runtime/src/cuda/CudaExecutor.cpp::gemm builds (FP8 with rowwise outer-vector scales).
// Constant data; each algorithm timed over 20 runs after 3 (5 at 8192 rows). On a machine with
// an NVIDIA Hopper GPU:
//   nvcc -O2 -arch=sm_90a bench/gemm_algos.cu -lcublasLt -o gemm_algos && ./gemm_algos
// `./gemm_algos --split-k` times instead the first choice with its k split, for the o and
// down projections at decode batch sizes.
#include <cublasLt.h>
#include <cuda_runtime.h>

#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

namespace {

void check(int result, const char *what) {
  if (result != 0) {
    std::fprintf(stderr, "gemm_algos: %s failed (%d)\n", what, result);
    std::exit(1);
  }
}

/// c[m, n] = a[m, k] @ w[n, k]^T, as CudaExecutor::gemm states it to cuBLASLt.
struct Shape {
  const char *name;
  int m, n, k;
  bool fp8;
  cudaDataType_t out;
  bool plus = false; // adds into the output (beta 1), as the residual projections do
};

struct Buffers {
  void *w, *a, *c, *aScales, *wScales, *workspace;
  size_t workspaceBytes = 32 << 20;
};

cublasLtMatmulDesc_t descriptorOf(const Shape &s, const Buffers &buf) {
  cublasLtMatmulDesc_t desc;
  check(cublasLtMatmulDescCreate(&desc, CUBLAS_COMPUTE_32F, CUDA_R_32F), "descriptor");
  cublasOperation_t transpose = CUBLAS_OP_T;
  check(cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_TRANSA, &transpose,
                                       sizeof transpose), "TRANSA");
  if (s.fp8) {
    cublasLtMatmulMatrixScale_t outer = CUBLASLT_MATMUL_MATRIX_SCALE_OUTER_VEC_32F;
    for (auto attr : {CUBLASLT_MATMUL_DESC_A_SCALE_MODE, CUBLASLT_MATMUL_DESC_B_SCALE_MODE})
      check(cublasLtMatmulDescSetAttribute(desc, attr, &outer, sizeof outer), "scale mode");
    check(cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_A_SCALE_POINTER,
                                         &buf.wScales, sizeof buf.wScales), "A scales");
    check(cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_B_SCALE_POINTER,
                                         &buf.aScales, sizeof buf.aScales), "B scales");
  }
  return desc;
}

/// Milliseconds per run of `algo`, or a negative value if it fails.
float timeAlgo(cublasLtHandle_t lt, cublasLtMatmulDesc_t desc, cublasLtMatrixLayout_t wl,
               cublasLtMatrixLayout_t al, cublasLtMatrixLayout_t cl,
               const cublasLtMatmulAlgo_t &algo, const Buffers &buf, int reps,
               cudaStream_t stream, bool plus) {
  float alpha = 1, beta = plus ? 1 : 0;
  auto once = [&] {
    return cublasLtMatmul(lt, desc, &alpha, buf.w, wl, buf.a, al, &beta, buf.c, cl, buf.c, cl,
                          &algo, buf.workspace, buf.workspaceBytes, stream);
  };
  for (int r = 0; r < 3; ++r)
    if (once() != CUBLAS_STATUS_SUCCESS)
      return -1;
  cudaEvent_t start, end;
  cudaEventCreate(&start);
  cudaEventCreate(&end);
  cudaEventRecord(start, stream);
  for (int r = 0; r < reps; ++r)
    once();
  cudaEventRecord(end, stream);
  cudaEventSynchronize(end);
  float ms;
  cudaEventElapsedTime(&ms, start, end);
  cudaEventDestroy(start);
  cudaEventDestroy(end);
  return ms / reps;
}

/// The descriptors of a shape's GEMM and a preference for buf's workspace.
struct Problem {
  cublasLtMatmulDesc_t desc;
  cublasLtMatrixLayout_t wl, al, cl;
  cublasLtMatmulPreference_t pref;

  Problem(const Shape &s, const Buffers &buf) : desc(descriptorOf(s, buf)) {
    cudaDataType_t in = s.fp8 ? CUDA_R_8F_E4M3 : CUDA_R_16BF;
    check(cublasLtMatrixLayoutCreate(&wl, in, s.k, s.n, s.k), "layout");
    check(cublasLtMatrixLayoutCreate(&al, in, s.k, s.m, s.k), "layout");
    check(cublasLtMatrixLayoutCreate(&cl, s.out, s.n, s.m, s.n), "layout");
    check(cublasLtMatmulPreferenceCreate(&pref), "preference");
    check(cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES,
                                               &buf.workspaceBytes, sizeof buf.workspaceBytes),
          "workspace");
  }
  Problem(const Problem &) = delete;
  ~Problem() {
    cublasLtMatmulPreferenceDestroy(pref);
    for (auto layout : {wl, al, cl})
      cublasLtMatrixLayoutDestroy(layout);
    cublasLtMatmulDescDestroy(desc);
  }
};

void measure(cublasLtHandle_t lt, const Shape &s, const Buffers &buf, cudaStream_t stream) {
  Problem p(s, buf);
  auto &[desc, wl, al, cl, pref] = p;
  cublasLtMatmulHeuristicResult_t offered[32];
  int count = 0;
  check(cublasLtMatmulAlgoGetHeuristic(lt, desc, wl, al, cl, cl, pref, 32, offered, &count),
        "heuristic");
  double flop = 2.0 * s.m * s.n * s.k;
  float first = -1, best = -1;
  int bestIndex = -1;
  for (int i = 0; i < count; ++i) {
    float ms = timeAlgo(lt, desc, wl, al, cl, offered[i].algo, buf, s.m >= 8192 ? 5 : 20, stream,
                         s.plus);
    if (i == 0)
      first = ms;
    if (ms > 0 && (best < 0 || ms < best))
      best = ms, bestIndex = i;
  }
  std::printf("%-20s m=%5d n=%6d k=%5d: %2d offered; first %.4f ms (%.0f TFLOP/s), best #%d "
              "%.4f ms (%.0f TFLOP/s), %.1f%% less\n",
              s.name, s.m, s.n, s.k, count, first, flop / first / 1e9, bestIndex, best,
              flop / best / 1e9, 100 * (first - best) / first);
}

/// The heuristic's first algorithm as it is, then with its k split over `splits` CTAs
/// (cuBLASLt's CUBLASLT_ALGO_CONFIG_SPLITK_NUM, partial sums reduced as `scheme` says),
/// timed; for GEMMs with few output tiles at decode batch sizes (the o and down
/// projections: n 4096 gives 32 to 64 CTAs on 132 SMs). "refused": cuBLASLt does not take
/// that configuration.
void measureSplitK(cublasLtHandle_t lt, const Shape &s, const Buffers &buf,
                   cudaStream_t stream) {
  Problem p(s, buf);
  auto &[desc, wl, al, cl, pref] = p;
  cublasLtMatmulHeuristicResult_t first;
  int count = 0;
  check(cublasLtMatmulAlgoGetHeuristic(lt, desc, wl, al, cl, cl, pref, 1, &first, &count),
        "heuristic");
  std::printf("%-20s m=%5d n=%6d k=%5d: first choice %.4f ms; split/scheme:", s.name, s.m,
              s.n, s.k, timeAlgo(lt, desc, wl, al, cl, first.algo, buf, 20, stream, s.plus));
  for (uint32_t scheme : {CUBLASLT_REDUCTION_SCHEME_NONE, CUBLASLT_REDUCTION_SCHEME_INPLACE,
                          CUBLASLT_REDUCTION_SCHEME_COMPUTE_TYPE}) {
    for (int32_t splits : {1, 2, 3, 4, 6, 8}) {
      if (splits == 1 && scheme != CUBLASLT_REDUCTION_SCHEME_NONE)
        continue;
      cublasLtMatmulAlgo_t algo = first.algo;
      cublasLtMatmulHeuristicResult_t checked;
      if (cublasLtMatmulAlgoConfigSetAttribute(&algo, CUBLASLT_ALGO_CONFIG_SPLITK_NUM, &splits,
                                               sizeof splits) != CUBLAS_STATUS_SUCCESS ||
          cublasLtMatmulAlgoConfigSetAttribute(&algo, CUBLASLT_ALGO_CONFIG_REDUCTION_SCHEME,
                                               &scheme, sizeof scheme) != CUBLAS_STATUS_SUCCESS ||
          cublasLtMatmulAlgoCheck(lt, desc, wl, al, cl, cl, &algo, &checked) !=
              CUBLAS_STATUS_SUCCESS) {
        std::printf(" [%d/%u: refused]", splits, scheme);
        continue;
      }
      float ms = timeAlgo(lt, desc, wl, al, cl, algo, buf, 20, stream, s.plus);
      std::printf(" [%d/%u: %.4f ms]", splits, scheme, ms);
    }
  }
  std::printf("\n");
}

} // namespace

int main(int argc, char **argv) {
  bool splitK = argc > 1 && std::string(argv[1]) == "--split-k";
  // Command R7B: hidden 4096, intermediate 14336, 32 + 2 x 8 heads of 128, vocabulary 256000.
  std::vector<Shape> shapes;
  for (int m : {1, 64, 256, 512, 2048, 8192}) {
    shapes.push_back({"qkv_gate_up fp8", m, 34816, 4096, true, CUDA_R_16BF});
    shapes.push_back({"o fp8 f32 plus", m, 4096, 4096, true, CUDA_R_32F, true});
    shapes.push_back({"down fp8 f32 plus", m, 4096, 14336, true, CUDA_R_32F, true});
    shapes.push_back({"qkv_gate_up bf16", m, 34816, 4096, false, CUDA_R_16BF});
    shapes.push_back({"o bf16 f32 plus", m, 4096, 4096, false, CUDA_R_32F, true});
    shapes.push_back({"down bf16 f32 plus", m, 4096, 14336, false, CUDA_R_32F, true});
    if (m <= 512)
      shapes.push_back({"logits bf16", m, 256000, 4096, false, CUDA_R_32F});
  }
  Buffers buf;
  size_t wBytes = (size_t)256000 * 4096 * 2, aBytes = (size_t)8192 * 18432 * 2;
  check(cudaMalloc(&buf.w, wBytes), "cudaMalloc");
  check(cudaMalloc(&buf.a, aBytes), "cudaMalloc");
  check(cudaMalloc(&buf.c, (size_t)8192 * 34816 * 4), "cudaMalloc");
  check(cudaMalloc(&buf.aScales, 8192 * 4), "cudaMalloc");
  check(cudaMalloc(&buf.wScales, 256000 * 4), "cudaMalloc");
  check(cudaMalloc(&buf.workspace, buf.workspaceBytes), "cudaMalloc");
  cudaMemset(buf.w, 0x11, wBytes);
  cudaMemset(buf.a, 0x11, aBytes);
  cublasLtHandle_t lt;
  check(cublasLtCreate(&lt), "cublasLtCreate");
  cudaStream_t stream;
  cudaStreamCreate(&stream);
  if (splitK) {
    for (int m : {64, 128, 256, 512})
      for (Shape s : {Shape{"o fp8 f32 plus", m, 4096, 4096, true, CUDA_R_32F, true},
                      Shape{"down fp8 f32 plus", m, 4096, 14336, true, CUDA_R_32F, true},
                      Shape{"o bf16 f32 plus", m, 4096, 4096, false, CUDA_R_32F, true},
                      Shape{"down bf16 f32 plus", m, 4096, 14336, false, CUDA_R_32F, true}})
        measureSplitK(lt, s, buf, stream);
    return 0;
  }
  for (const Shape &s : shapes)
    measure(lt, s, buf, stream);
  return 0;
}
