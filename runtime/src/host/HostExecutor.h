//===- HostExecutor.h - Runs a host-target artifact on the CPU ------------===//
//
// Owns the KV block pools in host memory and calls the artifact's
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
  /// `numBlocks` blocks of `blockSize` tokens per KV group. Errors: the
  /// artifact is not for the host target, or lacks the step function; the
  /// weights buffer is smaller than the layout; a negative block count; host
  /// memory that cannot hold the pools (naming the bytes and --kv-blocks).
  static StatusOr<std::unique_ptr<HostExecutor>>
  create(const LoadedArtifact &artifact, const WeightBuffer &weights,
         int64_t numBlocks, int64_t blockSize);

  Status run(const StepInput &input, StepOutput &output) override;
  std::vector<int64_t> bytesPerBlock() const override;

private:
  HostExecutor() = default;
  void *step_ = nullptr;
  const WeightBuffer *weights_ = nullptr;
  StepLimits limits_; // the vocabulary, block size and pools a step may use
  std::vector<int64_t> bytesPerBlock_;
  /// Every group's pool, back to back (the host target computes in f32: its
  /// lowering refuses any other precision); group g's starts at element
  /// poolOffsets_[g].
  std::vector<float> pool_;
  std::vector<int64_t> poolOffsets_;
  /// The step's block tables as the step function takes them: [groups,
  /// sequences, width].
  std::vector<int32_t> tables_;
};

} // namespace cohere2c

#endif // COHERE2C_RUNTIME_HOST_HOSTEXECUTOR_H
