//===- HostExecutor.cpp ---------------------------------------------------===//

#include "host/HostExecutor.h"

#include <new>

namespace cohere2c {

namespace {

/// MLIR's strided memref descriptor (the C interface of
/// `llvm.emit_c_interface`): allocated and aligned pointers, offset, sizes,
/// strides, all in elements.
template <typename T, int Rank> struct MemRef {
  T *allocated;
  T *aligned;
  int64_t offset;
  int64_t sizes[Rank];
  int64_t strides[Rank];
};

template <typename T> MemRef<T, 1> vec(const T *data, int64_t n) {
  T *p = const_cast<T *>(data);
  return {p, p, 0, {n}, {1}};
}
template <typename T> MemRef<T, 2> mat(const T *data, int64_t rows, int64_t cols) {
  T *p = const_cast<T *>(data);
  return {p, p, 0, {rows, cols}, {cols, 1}};
}

using StepFn = void (*)(MemRef<int8_t, 1> *, MemRef<int32_t, 1> *,
                        MemRef<int32_t, 1> *, MemRef<int32_t, 1> *,
                        MemRef<int32_t, 2> *, MemRef<float, 1> *,
                        MemRef<int32_t, 2> *, MemRef<float, 1> *,
                        MemRef<int32_t, 1> *, MemRef<float, 2> *, int64_t);

} // namespace

StatusOr<std::unique_ptr<HostExecutor>>
HostExecutor::create(const LoadedArtifact &artifact, const WeightBuffer &weights,
                     std::array<int64_t, kNumKVGroups> numBlocks,
                     int64_t blockSize) {
  const Manifest &m = artifact.manifest();
  if (m.target != "host")
    return Status::error(artifact.path() + ": compiled for the " + m.target +
                         " target, not host");
  if (weights.size() < m.weights.totalBytes)
    return Status::error("the weights buffer is smaller than the layout");
  StatusOr<void *> step = artifact.symbol("_mlir_ciface_cohere2c_step");
  if (!step.ok())
    return step.status();
  std::unique_ptr<HostExecutor> executor(new HostExecutor());
  executor->step_ = *step;
  executor->weights_ = &weights;
  executor->limits_ = StepLimits::of(m, blockSize, numBlocks);
  for (int g = 0; g < kNumKVGroups; ++g) {
    // The host target computes in f32 (its lowering refuses any other
    // precision), so the pools hold floats.
    int64_t bytes = kvBytesPerBlock(m, static_cast<KVGroupIndex>(g), blockSize);
    executor->bytesPerBlock_[g] = bytes;
    if (numBlocks[g] < 0)
      return Status::error("--kv-blocks must not be negative, found " +
                           std::to_string(numBlocks[g]));
    int64_t total = 0;
    bool overflow = __builtin_mul_overflow(numBlocks[g], bytes, &total);
    try {
      if (!overflow) {
        executor->pools_[g].assign(total / sizeof(float), 0.0f);
        continue;
      }
    } catch (const std::bad_alloc &) {
    }
    return Status::error(
        "cannot allocate " +
        (overflow ? std::string("more than 2^63") : std::to_string(total)) +
        " bytes of host memory for the KV cache (" + m.kvGroups[g].name +
        " group: --kv-blocks " + std::to_string(numBlocks[g]) + " x " +
        std::to_string(bytes) + " bytes per block of --block-size " +
        std::to_string(blockSize) + " tokens)");
  }
  return executor;
}

std::array<int64_t, kNumKVGroups> HostExecutor::bytesPerBlock() const {
  return bytesPerBlock_;
}

Status HostExecutor::run(const StepInput &in, StepOutput &output) {
  if (Status s = in.check(limits_); !s.ok())
    return s;
  int64_t tokens = in.ids.size(), rows = in.logitRows.size();
  std::vector<float> &logits = output.logits;
  logits.assign(rows * limits_.vocab, 0.0f);
  auto weights = vec(static_cast<const int8_t *>(weights_->data()),
                     (int64_t)weights_->size());
  auto ids = vec(in.ids.data(), tokens);
  auto positions = vec(in.positions.data(), tokens);
  auto seqs = vec(in.seqRows.data(), tokens);
  auto fullTables = mat(in.tables[kFullGroup].data(), in.numSeqs,
                        in.tableWidth[kFullGroup]);
  auto fullPool = vec(pools_[kFullGroup].data(), (int64_t)pools_[kFullGroup].size());
  auto slidingTables = mat(in.tables[kSlidingGroup].data(), in.numSeqs,
                           in.tableWidth[kSlidingGroup]);
  auto slidingPool =
      vec(pools_[kSlidingGroup].data(), (int64_t)pools_[kSlidingGroup].size());
  auto logitRows = vec(in.logitRows.data(), rows);
  auto out = mat(logits.data(), rows, limits_.vocab);
  reinterpret_cast<StepFn>(step_)(&weights, &ids, &positions, &seqs,
                                  &fullTables, &fullPool, &slidingTables,
                                  &slidingPool, &logitRows, &out, limits_.blockSize);
  greedyTokensOnHost(in, limits_.vocab, output);
  return Status::success();
}

} // namespace cohere2c
