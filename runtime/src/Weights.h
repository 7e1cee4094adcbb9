//===- Weights.h - The weights buffer a compiled step function reads ------===//
//
// One contiguous buffer in the artifact's WeightLayout, from one of:
//   - OUT.weights, written by cohere2c-compile (mmapped, not copied);
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
  /// Errors name the file: missing, or its size is not the layout's
  /// totalBytes (written for another model or precision).
  static StatusOr<std::unique_ptr<WeightBuffer>>
  fromWeightsFile(const std::string &path, const Manifest &manifest);
  /// Errors name the folder and the tensor (missing, wrong shape); host
  /// memory that cannot hold the layout's totalBytes.
  static StatusOr<std::unique_ptr<WeightBuffer>>
  fromCheckpoint(const std::string &dir, const Manifest &manifest);
  /// Norm weights 1 + U(-0.1, 0.1), every other weight U(-a, a) with
  /// a = 0.02 * sqrt(3) (standard deviation 0.02, Cohere's initializer
  /// range); deterministic in `seed`. Error: host memory that cannot hold
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
  void *mapping_ = nullptr; // when mmapped
  std::vector<char> owned_; // when converted or generated
};

} // namespace cohere2c

#endif // COHERE2C_RUNTIME_WEIGHTS_H
