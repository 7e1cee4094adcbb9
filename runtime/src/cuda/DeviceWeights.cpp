//===- DeviceWeights.cpp - Weights into device memory ---------------------===//
//
// Host memory stays bounded whatever the model's size: the entries are read
// in chunks of rows (WeightSource::readRows: pread from OUT.weights, a
// checkpoint converted row by row, every core filling a share of the chunk)
// into one of two pinned staging buffers while the other one's copy to the
// device runs, and a checkpoint's pages are given back chunk by chunk.
// Random weights are generated on the device by the plan's weight-fill
// kernels (RandomWeights.h), in a fraction of a second.
//
//===----------------------------------------------------------------------===//

#include "Artifact/RandomWeights.h"
#include "Support/ParallelFor.h"
#include "cuda/Check.h"
#include "cuda/CudaExecutor.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <thread>
#include <unistd.h>

namespace cohere2c {

namespace {

/// Bytes of each of the two pinned staging buffers.
constexpr size_t kStagingBytes = size_t(64) << 20;
/// Threads of the weight-fill kernels' blocks (WeightFillKernels.cpp).
constexpr unsigned kFillThreads = 256;
/// Blocks of a RandomUniform launch (a grid-stride loop): a few per SM.
constexpr unsigned kFillBlocks = 132 * 8;

/// "loading weights: 12.3/111.0 GB, 4.1 GB/s, 27 s left" on a terminal,
/// redrawn at most five times a second.
class Progress {
public:
  Progress(uint64_t total) : total_(total), terminal_(isatty(STDERR_FILENO)) {}
  void advance(uint64_t bytes) {
    done_ += bytes;
    double seconds = std::chrono::duration<double>(Clock::now() - start_).count();
    if (!terminal_ || (done_ < total_ && seconds - drawn_ < 0.2))
      return;
    drawn_ = seconds;
    double rate = done_ / std::max(seconds, 1e-3);
    std::fprintf(stderr, "\rloading weights: %.1f/%.1f GB, %.1f GB/s, %.0f s left   %s",
                 done_ / 1e9, total_ / 1e9, rate / 1e9, (total_ - done_) / rate,
                 done_ == total_ ? "\n" : "");
  }

private:
  using Clock = std::chrono::steady_clock;
  uint64_t total_, done_ = 0;
  bool terminal_;
  Clock::time_point start_ = Clock::now();
  double drawn_ = -1;
};

/// Pinned host memory, freed with the object.
struct PinnedBuffer {
  const CudaApi *api = nullptr;
  void *data = nullptr;
  CUevent copied = nullptr; // recorded after the copies out of it
  ~PinnedBuffer() {
    if (copied)
      api->cuEventDestroy(copied);
    if (data)
      api->cuMemFreeHost(data);
  }
};

} // namespace

Status CudaExecutor::loadWeights(const WeightSource &source) {
  const WeightLayout &layout = manifest_->weights;
  if (Status s = ensure(weights_, layout.totalBytes); !s.ok())
    return s;
  // The padding between entries reads as zeros.
  COHERE2C_CHECK(api_->cuMemsetD8Async(weights_.ptr, 0, layout.totalBytes, stream_));
  std::vector<bool> done(layout.entries.size(), false);
  for (size_t i = 0; i < layout.entries.size(); ++i)
    done[i] = layout.isScale(layout.entries[i]); // written with its weight
  if (std::optional<uint64_t> seed = source.randomSeed())
    if (Status s = generateWeights(*seed, done); !s.ok())
      return s;
  return streamWeights(source, done);
}

Status CudaExecutor::generateWeights(uint64_t seed, std::vector<bool> &done) {
  const WeightLayout &layout = manifest_->weights;
  const std::map<DType, std::string> &fills = manifest_->launchPlan.weightFills;
  std::vector<uint64_t> starts = randomStreamStarts(layout);
  for (size_t i = 0; i < layout.entries.size(); ++i) {
    const WeightEntry &entry = layout.entries[i];
    auto fill = fills.find(entry.dtype);
    int64_t cols = entry.shape.back(), rows = entry.rows();
    bool fp8 = entry.dtype == DType::F8E4M3;
    if (done[i] || fill == fills.end() || (fp8 && cols % 2) || rows == 0)
      continue;
    RandomAffine affine = randomAffineOf(entry);
    auto bits = [](double v) {
      uint64_t u;
      std::memcpy(&u, &v, sizeof(u));
      return u;
    };
    CUdeviceptr out = weights_.ptr + entry.offset;
    std::vector<uint64_t> values;
    unsigned blocks = kFillBlocks;
    if (fp8) {
      values = {out, weights_.ptr + layout.scaleOf(entry)->offset, (uint64_t)cols, seed,
                starts[i], bits(affine.scale)};
      blocks = (unsigned)rows;
    } else {
      values = {out,       (uint64_t)(rows * cols), seed,
                starts[i], bits(affine.scale),      bits(affine.offset)};
    }
    std::vector<void *> args;
    for (uint64_t &v : values)
      args.push_back(&v);
    CUlaunchConfig config{};
    config.gridDimX = blocks;
    config.gridDimY = config.gridDimZ = 1;
    config.blockDimX = kFillThreads;
    config.blockDimY = config.blockDimZ = 1;
    config.hStream = stream_;
    Status launched = api_->check(
        api_->cuLaunchKernelEx(&config, kernels_[fill->second], args.data(), nullptr),
        "cuLaunchKernelEx");
    if (!launched.ok())
      return Status::error(launched.message() + " (" + fill->second + ", " + entry.name + ")");
    done[i] = true;
  }
  COHERE2C_CHECK(api_->cuStreamSynchronize(stream_));
  return Status::success();
}

Status CudaExecutor::streamWeights(const WeightSource &source, const std::vector<bool> &done) {
  const WeightLayout &layout = manifest_->weights;
  struct Chunk {
    size_t entry;
    int64_t firstRow, endRow;
  };
  std::vector<Chunk> chunks;
  uint64_t total = 0;
  for (size_t i = 0; i < layout.entries.size(); ++i) {
    if (done[i])
      continue;
    const WeightEntry &entry = layout.entries[i];
    bool fp8 = entry.dtype == DType::F8E4M3;
    int64_t rowBytes = entry.shape.back() * dtypeSize(entry.dtype) + (fp8 ? 4 : 0);
    int64_t rows = entry.rows(), perChunk = std::max<int64_t>(1, kStagingBytes / rowBytes);
    for (int64_t r = 0; r < rows; r += perChunk)
      chunks.push_back({i, r, std::min(rows, r + perChunk)});
    total += rows * rowBytes;
  }
  if (chunks.empty())
    return Status::success();
  PinnedBuffer staging[2];
  for (PinnedBuffer &b : staging) {
    b.api = api_.get();
    COHERE2C_CHECK(api_->cuMemHostAlloc(&b.data, kStagingBytes + 256, 0)); // + the scales' alignment
    COHERE2C_CHECK(api_->cuEventCreate(&b.copied, CU_EVENT_DISABLE_TIMING));
  }
  Progress progress(total);
  unsigned cores = std::max(1u, std::thread::hardware_concurrency());
  for (size_t k = 0; k < chunks.size(); ++k) {
    const Chunk &c = chunks[k];
    const WeightEntry &entry = layout.entries[c.entry];
    const WeightEntry *scaleEntry = layout.scaleOf(entry);
    PinnedBuffer &buffer = staging[k % 2];
    if (k >= 2) // its previous chunk's copies are done
      COHERE2C_CHECK(api_->cuEventSynchronize(buffer.copied));
    int64_t rows = c.endRow - c.firstRow;
    int64_t rowBytes = entry.shape.back() * dtypeSize(entry.dtype);
    char *values = static_cast<char *>(buffer.data);
    float *scales = reinterpret_cast<float *>(values + (rows * rowBytes + 255) / 256 * 256);
    // Every core reads or converts a share of the chunk's rows.
    int64_t share = (rows + cores - 1) / cores;
    std::vector<Status> errors(cores);
    parallelFor(cores, [&](size_t t) {
      int64_t lo = std::min(rows, (int64_t)t * share), hi = std::min(rows, lo + share);
      if (lo < hi)
        errors[t] = source.readRows(entry, c.firstRow + lo, c.firstRow + hi,
                                    values + lo * rowBytes, scales + lo);
    });
    for (const Status &s : errors)
      if (!s.ok())
        return s;
    COHERE2C_CHECK(api_->cuMemcpyHtoDAsync(weights_.ptr + entry.offset + c.firstRow * rowBytes,
                                           values, rows * rowBytes, stream_));
    if (scaleEntry)
      COHERE2C_CHECK(api_->cuMemcpyHtoDAsync(weights_.ptr + scaleEntry->offset + c.firstRow * 4,
                                             scales, rows * 4, stream_));
    COHERE2C_CHECK(api_->cuEventRecord(buffer.copied, stream_));
    source.release(entry, c.firstRow, c.endRow);
    progress.advance(rows * (rowBytes + (scaleEntry ? 4 : 0)));
  }
  COHERE2C_CHECK(api_->cuStreamSynchronize(stream_));
  return Status::success();
}

} // namespace cohere2c
