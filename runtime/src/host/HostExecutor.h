//===- HostExecutor.h - Runs a host-target artifact on the CPU ------------===//
//
// Owns the KV block pool in host memory and calls the artifact's
// `_mlir_ciface_cohere2c_step` (the ABI of AttnToHost.h) with memref
// descriptors over the step's arrays. Not thread-safe.
//
//===----------------------------------------------------------------------===//
#ifndef COHERE2C_RUNTIME_HOST_HOSTEXECUTOR_H
#define COHERE2C_RUNTIME_HOST_HOSTEXECUTOR_H

#include "Artifact.h"
#include "Executor.h"
#include "Weights.h"

#include <memory>

namespace cohere2c {

class HostExecutor : public Executor {
public:
  /// A KV pool of `numBlocks` blocks of `blockSize` tokens. Errors: the
  /// artifact is not for the host target, or lacks the step function; the
  /// weights buffer is smaller than the layout; a negative block count; host
  /// memory that cannot hold the pool (naming the bytes and --kv-blocks).
  static StatusOr<std::unique_ptr<HostExecutor>>
  create(const LoadedArtifact &artifact, const WeightBuffer &weights,
         int64_t numBlocks, int64_t blockSize);

  Status run(const StepInput &input, StepOutput &output) override;
  int64_t bytesPerBlock() const override;

private:
  HostExecutor() = default;
  void *step_ = nullptr;
  const WeightBuffer *weights_ = nullptr;
  StepLimits limits_; // the vocabulary, block size and blocks a step may use
  int64_t bytesPerBlock_ = 0;
  /// The KV pool of every group (the host target computes in f32: its
  /// lowering refuses any other precision).
  std::vector<float> pool_;
  /// The step's block tables as the step function takes them: [groups,
  /// sequences, width].
  std::vector<int32_t> tables_;
};

} // namespace cohere2c

#endif // COHERE2C_RUNTIME_HOST_HOSTEXECUTOR_H
