//===- CudaExecutor.h - Runs a cuda-target artifact on the GPU ------------===//
//
// Loads the artifact's cubin (or, failing that, its PTX through the
// driver's JIT), keeps the weights and the KV block pool in device memory,
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
#include "scheduler/Engine.h"

#include <array>
#include <map>
#include <memory>
#include <tuple>

namespace cohere2c {

class CudaExecutor : public Executor {
public:
  /// cuBLASLt's workspace, one per stream.
  static constexpr size_t kWorkspaceBytes = 32 << 20;
  /// Loads the kernels, then the weights into device memory
  /// (DeviceWeights.cpp: streamed in chunks through pinned host memory, or
  /// generated on the device for random weights), reserves the activations
  /// of the largest step `options` allow and gives the KV pool
  /// options.numBlocks blocks of options.blockSize tokens, or,
  /// when 0, what options.gpuMemoryUtilization leaves (written back;
  /// DeviceMemory.cpp). Errors: no usable GPU, an artifact for another
  /// target, a kernel image the driver rejects, a model that does not fit
  /// (saying what it needs and what the device has), out of device memory
  /// (naming the call), the weight source's read errors.
  static StatusOr<std::unique_ptr<CudaExecutor>>
  create(const LoadedArtifact &artifact, const WeightSource &weights,
         EngineOptions &options);
  ~CudaExecutor() override;

  Status run(const StepInput &input, StepOutput &output) override;
  int64_t bytesPerBlock() const override;
  /// The GPU's name, for reports.
  const std::string &deviceName() const { return deviceName_; }
  /// How the device memory was split, for reports: "weights 15.0 GiB,
  /// activations 1.2 GiB, KV cache 100.3 GiB: ..." (DeviceMemory.cpp).
  const std::string &memoryReport() const { return memoryReport_; }

private:
  /// Device memory that grows to the largest size asked of it.
  struct DeviceArray {
    CUdeviceptr ptr = 0;
    size_t bytes = 0;
  };
  CudaExecutor() = default;
  /// The kernel image and every kernel the plan launches or fills weights with.
  Status loadKernels(const LoadedArtifact &artifact);
  /// That every grid-synchronized launch of the plan (KernelSpec::gridSync)
  /// fits `device` at once, by the kernel's occupancy: otherwise its blocks
  /// would wait forever for blocks that cannot start. Errors name the
  /// kernel, the blocks it needs and those the device holds.
  Status checkGridSync(CUdevice device);
  /// Refuses a model whose weights and workspaces do not fit what
  /// `utilization` of the device allows (DeviceMemory.cpp).
  Status checkWeightsFit(double utilization);
  /// Reserves the activations of the largest step of `options`, then gives
  /// the KV pool its blocks (DeviceMemory.cpp).
  Status planMemory(EngineOptions &options);
  /// The plan's buffers, as large as a step of `params` needs.
  Status ensureBuffers(const StepParamValues &params);
  /// The weights into weights_ (DeviceWeights.cpp).
  Status loadWeights(const WeightSource &source);
  /// The entries of the layout not `done` yet, read from `source` in chunks
  /// of rows into pinned host memory and copied from there.
  Status streamWeights(const WeightSource &source, const std::vector<bool> &done);
  /// Random weights: the plan's weight-fill kernels; `done` says which
  /// entries they filled (not an FP8 one with odd rows, nor one of a dtype
  /// the plan has no kernel for: streamWeights writes those).
  Status generateWeights(uint64_t seed, std::vector<bool> &done);
  Status ensure(DeviceArray &array, size_t bytes);
  /// ensure, and a newly allocated array is filled with zero bytes.
  Status ensureZeroed(DeviceArray &array, size_t bytes);
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
  /// `aScales` are a's per-token scales (FP8 only), `addend` what a plus
  /// GEMM adds (it may be c).
  Status gemm(const PlanStep &step, CUstream stream, CUdeviceptr a,
              CUdeviceptr c, int64_t m, CUdeviceptr aScales,
              CUdeviceptr addend);

  std::unique_ptr<CudaApi> api_;
  const Manifest *manifest_ = nullptr;
  std::string deviceName_, memoryReport_;
  CUcontext context_ = nullptr;
  CUstream stream_ = nullptr, sideStream_ = nullptr;
  CUevent forkEvent_ = nullptr,
          joinEvent_ = nullptr; // the plan's fork and join steps
  CUmodule module_ = nullptr;
  std::map<std::string, CUfunction> kernels_;
  cublasLtHandle_t cublas_ = nullptr;
  DeviceArray weights_, workspace_, sideWorkspace_;
  /// Per KV group: its block tables (the step input kv_tables of the group).
  std::vector<DeviceArray> tables_;
  int64_t bytesPerBlock_ = 0; // of a KV block (of any group)
  StepLimits limits_; // the vocabulary, block size and blocks a step may use
  DType dtype_ = DType::BF16;
  // Step inputs and the plan's buffers, by name.
  /// The step inputs by PlanInput but the block tables (tables_).
  std::array<DeviceArray, kNumPlanInputs> inputs_;
  DeviceArray &input(PlanInput i) { return inputs_[(int)i]; }
  std::map<std::string, DeviceArray> buffers_;
  /// Decode-step graphs by their step parameters (every size the launches
  /// depend on: tokens, table widths, whether tokens are picked),
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
