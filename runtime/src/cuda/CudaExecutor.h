//===- CudaExecutor.h - Runs a cuda-target artifact on the GPU ------------===//
//
// Loads the artifact's cubin (or, failing that, its PTX through the
// driver's JIT), keeps the weights and the KV block pools in device memory,
// and replays the artifact's launch plan on two CUDA streams, a main one and
// a side one that forks from it and joins it again where the plan says
// (events): generated kernels through cuLaunchKernelEx with programmatic
// dependent launch (each may start before the previous one on its stream
// ends and waits for its results itself), GEMMs through cuBLASLt (a
// workspace per stream). Every CUDA call is checked. Not thread-safe, but
// not tied to a thread either: each call makes the device's primary context
// current on the calling thread (a server creates the executor on one thread
// and steps it on its engine thread).
//
//===----------------------------------------------------------------------===//
#ifndef COHERE2C_RUNTIME_CUDA_CUDAEXECUTOR_H
#define COHERE2C_RUNTIME_CUDA_CUDAEXECUTOR_H

#include "Artifact.h"
#include "Executor.h"
#include "Weights.h"
#include "cuda/CudaApi.h"

#include <array>
#include <map>
#include <memory>
#include <tuple>

namespace cohere2c {

class CudaExecutor : public Executor {
public:
  /// `numBlocks[g]` blocks of `blockSize` tokens per KV group. Errors: no
  /// usable GPU, an artifact for another target, a kernel image the driver
  /// rejects, out of device memory (naming the call).
  static StatusOr<std::unique_ptr<CudaExecutor>>
  create(const LoadedArtifact &artifact, const WeightBuffer &weights,
         std::array<int64_t, kNumKVGroups> numBlocks, int64_t blockSize);
  ~CudaExecutor() override;

  Status run(const StepInput &input, StepOutput &output) override;
  std::array<int64_t, kNumKVGroups> bytesPerBlock() const override;
  /// The GPU's name, for reports.
  const std::string &deviceName() const { return deviceName_; }

private:
  /// Device memory that grows to the largest size asked of it.
  struct DeviceArray {
    CUdeviceptr ptr = 0;
    size_t bytes = 0;
  };
  CudaExecutor() = default;
  Status ensure(DeviceArray &array, size_t bytes);
  Status upload(DeviceArray &array, const void *data, size_t bytes);
  /// The dtype of the plan buffer `name`.
  DType bufferDType(const std::string &name) const;
  /// Enqueues the plan's launches and GEMMs for a step of these sizes.
  Status enqueueSteps(const StepParamValues &params);
  /// Enqueues a decode step as a CUDA graph, captured on first use per
  /// (tokens, table widths) and replayed after.
  Status launchGraph(const StepParamValues &params);
  void destroyGraphs();
  /// One GEMM of the plan on `stream` (with that stream's workspace);
  /// `aScales` are a's per-token scales (FP8 only).
  Status gemm(const PlanStep &step, CUstream stream, CUdeviceptr a,
              CUdeviceptr c, int64_t m, CUdeviceptr aScales);

  std::unique_ptr<CudaApi> api_;
  const Manifest *manifest_ = nullptr;
  std::string deviceName_;
  CUcontext context_ = nullptr;
  CUstream stream_ = nullptr, sideStream_ = nullptr;
  CUevent forkEvent_ = nullptr,
          joinEvent_ = nullptr; // the plan's fork and join steps
  CUmodule module_ = nullptr;
  std::map<std::string, CUfunction> kernels_;
  cublasLtHandle_t cublas_ = nullptr;
  DeviceArray weights_, workspace_, sideWorkspace_;
  std::array<DeviceArray, kNumKVGroups> pools_;
  std::array<int64_t, kNumKVGroups> bytesPerBlock_ = {0, 0};
  StepLimits limits_; // the vocabulary, block size and pools a step may use
  DType dtype_ = DType::BF16;
  // Step inputs and the plan's buffers, by name.
  /// The step inputs by PlanInput (the pools are pools_).
  std::array<DeviceArray, kNumPlanInputs> inputs_;
  DeviceArray &input(PlanInput i) { return inputs_[(int)i]; }
  std::map<std::string, DeviceArray> buffers_;
  /// Decode-step graphs by their step parameters (every size the launches
  /// depend on: tokens, table widths, whether greedy tokens are picked),
  /// valid while no device array they captured was reallocated (generation).
  struct Graph {
    CUgraph graph = nullptr;
    CUgraphExec exec = nullptr;
  };
  std::map<StepParamValues, Graph> graphs_;
  int64_t generation_ = 0, graphsGeneration_ = 0;
  /// cuBLASLt's best algorithm per (m, n, k, output dtype, FP8).
  std::map<std::tuple<int64_t, int64_t, int64_t, int, bool>,
           cublasLtMatmulAlgo_t>
      algos_;
};

} // namespace cohere2c

#endif // COHERE2C_RUNTIME_CUDA_CUDAEXECUTOR_H
