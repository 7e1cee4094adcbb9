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
template <typename T>
MemRef<T, 3> cube(const T *data, int64_t n0, int64_t n1, int64_t n2) {
  T *p = const_cast<T *>(data);
  return {p, p, 0, {n0, n1, n2}, {n1 * n2, n2, 1}};
}

using StepFn = void (*)(MemRef<int8_t, 1> *, MemRef<int32_t, 1> *,
                        MemRef<int32_t, 1> *, MemRef<int32_t, 1> *,
                        MemRef<int32_t, 3> *, MemRef<float, 1> *,
                        MemRef<int32_t, 1> *, MemRef<float, 2> *, int64_t);

} // namespace

StatusOr<std::unique_ptr<HostExecutor>>
HostExecutor::create(const LoadedArtifact &artifact,
                     const WeightBuffer &weights, int64_t numBlocks,
                     int64_t blockSize) {
  const Manifest &m = artifact.manifest();
  if (m.target != "host")
    return Status::error(artifact.path() + ": compiled for the " + m.target +
                         " target, not host");
  if (weights.size() < m.weights.totalBytes)
    return Status::error("the weights buffer is smaller than the layout");
  if (numBlocks < 0)
    return Status::error("--kv-blocks must not be negative, found " +
                         std::to_string(numBlocks));
  StatusOr<void *> step = artifact.symbol("_mlir_ciface_cohere2c_step");
  if (!step.ok())
    return step.status();
  std::unique_ptr<HostExecutor> executor(new HostExecutor());
  executor->step_ = *step;
  executor->weights_ = &weights;
  executor->limits_ = StepLimits::of(m, blockSize, numBlocks);
  executor->bytesPerBlock_ = kvBytesPerBlock(m, blockSize);
  int64_t total = 0;
  bool overflow =
      __builtin_mul_overflow(numBlocks, executor->bytesPerBlock_, &total);
  try {
    if (!overflow) {
      executor->pool_.assign(total / sizeof(float), 0.0f);
      return executor;
    }
  } catch (const std::bad_alloc &) {
  }
  return Status::error(
      "cannot allocate " +
      (overflow ? std::string("more than 2^63") : std::to_string(total)) +
      " bytes of host memory for the KV cache (--kv-blocks " +
      std::to_string(numBlocks) + " blocks of --block-size " +
      std::to_string(blockSize) + " tokens)");
}

int64_t HostExecutor::bytesPerBlock() const { return bytesPerBlock_; }

Status HostExecutor::run(const StepInput &in, StepOutput &output) {
  if (Status s = in.check(limits_); !s.ok())
    return s;
  int64_t tokens = in.ids.size(), rows = in.logitRows.size();
  int64_t groups = in.tables.size(), width = in.tableWidth;
  std::vector<float> &logits = output.logits;
  logits.assign(rows * limits_.vocab, 0.0f);
  tables_.clear();
  for (const std::vector<int32_t> &table : in.tables)
    tables_.insert(tables_.end(), table.begin(), table.end());
  auto weights = vec(static_cast<const int8_t *>(weights_->data()),
                     (int64_t)weights_->size());
  auto ids = vec(in.ids.data(), tokens);
  auto positions = vec(in.positions.data(), tokens);
  auto seqs = vec(in.seqRows.data(), tokens);
  auto tables = cube(tables_.data(), groups, in.numSeqs, width);
  auto pool = vec(pool_.data(), (int64_t)pool_.size());
  auto logitRows = vec(in.logitRows.data(), rows);
  auto out = mat(logits.data(), rows, limits_.vocab);
  reinterpret_cast<StepFn>(step_)(&weights, &ids, &positions, &seqs, &tables,
                                  &pool, &logitRows, &out, limits_.blockSize);
  sampledTokensOnHost(in, limits_.vocab, output);
  return Status::success();
}

} // namespace cohere2c
