//===- DeviceMemory.cpp - How a cuda executor splits device memory --------===//
//
// As vLLM does (gpu_memory_utilization): the engine may take a fraction of
// the device's memory, what other processes hold counted against it. The
// weights and cuBLASLt's workspaces come first (a model whose weights do not
// fit is refused before anything is copied), then the activations of the
// largest step the scheduler forms (EngineOptions::maxStepTokens), then the
// KV cache takes what is left. Steps that want more activations than the
// reserve (logits of every token of a long prompt) allocate them on demand
// from the memory beyond the fraction.
//
//===----------------------------------------------------------------------===//

#include "cuda/Check.h"
#include "cuda/CudaExecutor.h"

#include <algorithm>
#include <cstdio>

namespace cohere2c {

namespace {

std::string gib(double bytes) {
  char text[32];
  std::snprintf(text, sizeof(text), "%.2f GiB", bytes / double(1ull << 30));
  return text;
}

/// The largest value of every step parameter over the steps `options`
/// allow: up to maxStepTokens tokens, up to maxBatch of them generated and
/// wanting logits, each seeing the whole context.
StepParamValues largestStep(const Manifest &manifest, const EngineOptions &options) {
  int64_t context = manifest.config.maxPositionEmbeddings;
  int64_t width = (context + options.blockSize - 1) / options.blockSize;
  StepParamValues largest;
  for (int64_t tokens = 1;; tokens = std::min(2 * tokens, options.maxStepTokens)) {
    int64_t perSequence = std::min(tokens, options.maxBatch);
    for (int64_t generated : {int64_t(0), perSequence}) {
      StepParamValues p =
          stepParams(tokens, generated, perSequence, options.blockSize, width,
                     context, context, false);
      for (int i = 0; i < kNumStepParams; ++i)
        largest.values[i] = std::max(largest.values[i], p.values[i]);
    }
    if (tokens == options.maxStepTokens)
      return largest;
  }
}

} // namespace

Status CudaExecutor::checkWeightsFit(double utilization) {
  if (!(utilization > 0 && utilization <= 1))
    return Status::error("--gpu-memory-utilization must be in (0, 1], found " +
                         std::to_string(utilization));
  size_t free = 0, total = 0;
  COHERE2C_CHECK(api_->cuMemGetInfo(&free, &total));
  double allowed = utilization * total - double(total - free);
  double needed = manifest_->weights.totalBytes + 2.0 * kWorkspaceBytes;
  if (needed <= allowed)
    return Status::success();
  return Status::error(
      "does not fit the device: its weights need " + gib(manifest_->weights.totalBytes) +
      " (and " + gib(2.0 * kWorkspaceBytes) + " of GEMM workspace), but " +
      "--gpu-memory-utilization " + std::to_string(utilization).substr(0, 4) + " of the " +
      gib(total) + " of " + deviceName_ + " leaves " + gib(std::max(0.0, allowed)) + " (" +
      gib(free) + " free now)");
}

Status CudaExecutor::planMemory(EngineOptions &options) {
  const Manifest &m = *manifest_;
  if (Status s = ensureBuffers(largestStep(m, options)); !s.ok())
    return s;
  int64_t rows = options.maxBatch, tokens = options.maxStepTokens;
  for (PlanInput i : {PlanInput::Ids, PlanInput::Positions, PlanInput::Seqs,
                      PlanInput::Generated, PlanInput::GeneratedRows})
    if (Status s = ensure(input(i), tokens * 4); !s.ok())
      return s;
  if (Status s = ensureZeroed(input(PlanInput::Logits), rows * m.config.vocabSize * 4);
      !s.ok())
    return s;
  for (auto [i, bytes] : {std::pair{PlanInput::SampledTokens, 4},
                          std::pair{PlanInput::Temperatures, 4},
                          std::pair{PlanInput::NoiseSeeds, 8}})
    if (Status s = ensure(input(i), rows * bytes); !s.ok())
      return s;
  double activations = 0;
  for (const auto &[name, a] : buffers_)
    activations += a.bytes;
  // The step inputs; the KV pool's is allocated below (none yet).
  for (const DeviceArray &a : inputs_)
    activations += a.bytes;

  bytesPerBlock_ = kvBytesPerBlock(m, options.blockSize);
  tables_.resize(m.kvGroups.size());
  if (options.numBlocks == 0) {
    size_t free = 0, total = 0;
    COHERE2C_CHECK(api_->cuMemGetInfo(&free, &total));
    double left = options.gpuMemoryUtilization * total - double(total - free);
    // A token takes a block in every group: fewer blocks than groups hold
    // no token.
    int64_t groups = m.kvGroups.size();
    int64_t blocks = std::min<double>(left / bytesPerBlock_, (1ll << 31) - 1);
    if (blocks < groups)
      return Status::error(
          "no device memory left for the KV cache: the weights take " +
          gib(m.weights.totalBytes) +
          " and the activations of steps of up to " + std::to_string(tokens) +
          " tokens " + gib(activations) + " of the " +
          gib(options.gpuMemoryUtilization * total) +
          " --gpu-memory-utilization allows, leaving room for " +
          std::to_string(std::max<int64_t>(blocks, 0)) + " KV blocks of " +
          gib(bytesPerBlock_) + " where the " + std::to_string(groups) +
          " KV groups need at least " + std::to_string(groups) +
          "; lower --max-num-batched-tokens or raise --gpu-memory-utilization");
    options.numBlocks = blocks;
  }
  if (Status s =
          ensure(input(PlanInput::KVPool), options.numBlocks * bytesPerBlock_);
      !s.ok())
    return s;
  memoryReport_ = "weights " + gib(m.weights.totalBytes) + ", activations " +
                  gib(activations) + " (steps of up to " +
                  std::to_string(tokens) + " tokens), KV cache " +
                  gib(double(options.numBlocks) * bytesPerBlock_) + ": " +
                  kvCapacityText(m, options);
  return Status::success();
}

} // namespace cohere2c
