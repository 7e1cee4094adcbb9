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
  /// `numBlocks[g]` blocks of `blockSize` tokens per KV group. Errors: the
  /// artifact is not for the host target, or lacks the step function; the
  /// weights buffer is smaller than the layout; a negative block count; host
  /// memory that cannot hold a pool (naming the bytes, the group and
  /// --kv-blocks).
  static StatusOr<std::unique_ptr<HostExecutor>>
  create(const LoadedArtifact &artifact, const WeightBuffer &weights,
         std::array<int64_t, kNumKVGroups> numBlocks, int64_t blockSize);

  Status run(const StepInput &input, StepOutput &output) override;
  std::array<int64_t, kNumKVGroups> bytesPerBlock() const override;

private:
  HostExecutor() = default;
  void *step_ = nullptr;
  const WeightBuffer *weights_ = nullptr;
  StepLimits limits_; // the vocabulary, block size and pools a step may use
  std::array<int64_t, kNumKVGroups> bytesPerBlock_ = {0, 0};
  std::array<std::vector<float>, kNumKVGroups> pools_;
};

} // namespace cohere2c

#endif // COHERE2C_RUNTIME_HOST_HOSTEXECUTOR_H
