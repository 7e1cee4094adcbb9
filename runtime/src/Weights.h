//===- Weights.h - Where a compiled model's weights come from -------------===//
//
// A WeightSource is bound to an artifact once it is checked, and read when
// an executor is created: the host target keeps the whole buffer in host
// memory (hostBuffer()), the cuda target streams it to the device in chunks
// of rows (readRows) or, for random weights, generates it there. Sources:
//   - OUT.weights, written by cohere2c-compile, whose header must carry the
//     artifact's weights id (read with pread, or mmapped for the host);
//   - a Hugging Face checkpoint folder, converted as it is read
//     (WeightPacking.h);
//   - a seed (RandomWeights.h).
//
//===----------------------------------------------------------------------===//
#ifndef COHERE2C_RUNTIME_WEIGHTS_H
#define COHERE2C_RUNTIME_WEIGHTS_H

#include "Artifact/Manifest.h"
#include "Model/SafeTensors.h"
#include "Support/Status.h"

#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

namespace cohere2c {

/// One contiguous buffer in the artifact's WeightLayout in host memory.
class WeightBuffer {
public:
  /// Maps OUT.weights (WeightsFile.h); data() is the buffer after its
  /// header. Errors name the file: missing, not a regular file, or a header
  /// that does not match the artifact (checkWeightsHeader: no magic, another
  /// size, cut short, another weights id).
  static StatusOr<std::unique_ptr<WeightBuffer>>
  fromWeightsFile(const std::string &path, const Manifest &manifest);
  /// `bytes` zeroed bytes of host memory to fill. Error: host memory that
  /// cannot be had.
  static StatusOr<std::unique_ptr<WeightBuffer>> zeroed(uint64_t bytes);
  ~WeightBuffer();

  const void *data() const { return data_; }
  char *mutableData() { return owned_.data(); }
  uint64_t size() const { return size_; }

private:
  WeightBuffer() = default;
  const void *data_ = nullptr;
  uint64_t size_ = 0;
  void *mapping_ = nullptr; // when mmapped: the whole file, header included
  uint64_t mappingBytes_ = 0;
  std::vector<char> owned_; // when converted or generated
};

class WeightSource {
public:
  /// OUT.weights, its header checked (WeightBuffer::fromWeightsFile's
  /// errors); opened with O_NONBLOCK, so that a FIFO fails instead of
  /// waiting for a writer.
  static StatusOr<std::unique_ptr<WeightSource>>
  weightsFile(const std::string &path, const Manifest &manifest);
  /// Checks, before anything is read, that DIR/config.json describes the
  /// artifact's model (an error names the first differing field and both
  /// values) and that every tensor is there with its shape (checkTensors).
  /// Errors name the folder and the tensor (missing, wrong shape).
  static StatusOr<std::unique_ptr<WeightSource>>
  checkpoint(const std::string &dir, const Manifest &manifest);
  /// RandomWeights.h's weights of `seed`.
  static std::unique_ptr<WeightSource> random(uint64_t seed,
                                              const Manifest &manifest);
  ~WeightSource();

  /// The seed of random weights (which a device may generate itself).
  std::optional<uint64_t> randomSeed() const { return seed_; }
  /// What is read, for messages: the file, the folder, or the seed.
  const std::string &description() const { return description_; }
  const WeightLayout &layout() const { return manifest_.weights; }

  /// Rows [firstRow, endRow) (of the last dimension) of `entry`, an entry of
  /// the layout that is not a scale entry, in the layout's dtype into
  /// `rows`, and for an F8E4M3 entry their scales into `scales` (an f32 per
  /// row). Errors name the file and the tensor: a short read, a NaN or
  /// infinity in a checkpoint. Thread-safe.
  Status readRows(const WeightEntry &entry, int64_t firstRow, int64_t endRow,
                  char *rows, float *scales) const;
  /// Gives back the host pages that reading rows [firstRow, endRow) of
  /// `entry` mapped (of a checkpoint's tensor, and its scales with the last
  /// row; nothing for the other sources), once they are read.
  void release(const WeightEntry &entry, int64_t firstRow, int64_t endRow) const;
  /// The whole buffer in host memory: the weights file mapped, else filled
  /// on the first call (a checkpoint converted on every core, with a
  /// progress line on a terminal). Thread-safe; the buffer lives as long as
  /// the source. Errors: readRows's, or host memory that cannot hold the
  /// layout's totalBytes.
  StatusOr<const WeightBuffer *> hostBuffer() const;

private:
  explicit WeightSource(const Manifest &manifest) : manifest_(manifest) {}
  const Manifest &manifest_;
  std::string description_;
  std::string path_; // the weights file
  int fd_ = -1;
  std::optional<Checkpoint> checkpoint_;
  std::optional<uint64_t> seed_;
  std::vector<uint64_t> streamStarts_; // random: by entry
  mutable std::mutex hostMutex_;
  mutable std::unique_ptr<WeightBuffer> host_;
};

} // namespace cohere2c

#endif // COHERE2C_RUNTIME_WEIGHTS_H
