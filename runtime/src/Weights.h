//===- Weights.h - The weights buffer a compiled step function reads ------===//
//
// One contiguous buffer in the artifact's WeightLayout, from one of:
//   - OUT.weights, written by cohere2c-compile (mmapped, not copied), whose
//     header must carry the artifact's weights id;
//   - a Hugging Face checkpoint folder, converted on load;
//   - a seeded random generator (real-shape runs without a checkpoint).
//
//===----------------------------------------------------------------------===//
#ifndef COHERE2C_RUNTIME_WEIGHTS_H
#define COHERE2C_RUNTIME_WEIGHTS_H

#include "Artifact/Manifest.h"
#include "Support/Status.h"

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace cohere2c {

class WeightBuffer {
public:
  /// Maps OUT.weights (WeightsFile.h); data() is the buffer after its
  /// header. Errors name the file: missing, not a regular file, or a header
  /// that does not match the artifact (checkWeightsHeader: no magic, another
  /// size, cut short, another weights id).
  static StatusOr<std::unique_ptr<WeightBuffer>>
  fromWeightsFile(const std::string &path, const Manifest &manifest);
  /// Checks, before allocating anything, that DIR/config.json describes the
  /// artifact's model (an error names the first differing field and both
  /// values) and that every tensor is there with its shape (checkTensors).
  /// Errors name the folder and the tensor (missing, wrong shape); host
  /// memory that cannot hold the layout's totalBytes.
  static StatusOr<std::unique_ptr<WeightBuffer>>
  fromCheckpoint(const std::string &dir, const Manifest &manifest);
  /// Norm weights 1 + U(-0.1, 0.1), every other weight U(-a, a) with
  /// a = 0.02 * sqrt(3) (standard deviation 0.02, Cohere's initializer
  /// range; FP8 weights quantized rowwise from such values); deterministic
  /// in `seed`. Error: host memory that cannot hold
  /// the layout's totalBytes.
  static StatusOr<std::unique_ptr<WeightBuffer>>
  random(uint64_t seed, const Manifest &manifest);
  ~WeightBuffer();

  const void *data() const { return data_; }
  uint64_t size() const { return size_; }

private:
  WeightBuffer() = default;
  const void *data_ = nullptr;
  uint64_t size_ = 0;
  void *mapping_ = nullptr; // when mmapped: the whole file, header included
  uint64_t mappingBytes_ = 0;
  std::vector<char> owned_; // when converted or generated
};

} // namespace cohere2c

#endif // COHERE2C_RUNTIME_WEIGHTS_H
