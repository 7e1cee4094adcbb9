//===- WeightLayout.h - Where each weight lives in the weights file -------===//
//
// The compiled step function reads every weight at a byte offset fixed at
// compile time in one weights buffer: the OUT.weights file the compiler
// writes, or the same layout built by the runtime from a checkpoint or from
// random values. Offsets depend on the config and the storage dtype only.
//
//===----------------------------------------------------------------------===//
#ifndef COHERE2C_ARTIFACT_WEIGHTLAYOUT_H
#define COHERE2C_ARTIFACT_WEIGHTLAYOUT_H

#include "Model/Config.h"
#include "Model/SafeTensors.h"

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

namespace cohere2c {

struct WeightEntry {
  std::string name;           // the Hugging Face tensor name
  std::vector<int64_t> shape; // row-major
  DType dtype = DType::F32;
  uint64_t offset = 0;   // bytes from the start of the weights buffer
  uint64_t numBytes = 0; // elements x dtype size

  /// Rows of the last dimension: elements / shape.back() (1 for a vector).
  int64_t rows() const {
    return numBytes / dtypeSize(dtype) / std::max<int64_t>(shape.back(), 1);
  }
};

struct WeightLayout {
  /// Every weight is aligned to this many bytes (a cache line; also enough
  /// for 128-bit vector loads on the GPU).
  static constexpr uint64_t kAlignment = 256;

  std::vector<WeightEntry> entries; // in expectedTensors() order
  uint64_t totalBytes = 0;

  /// The layout of expectedTensors(config), each stored as `dtype`; with
  /// `fp8Linear`, each linear weight ("*_proj.weight", [out, in]) is stored
  /// as F8E4M3 and followed by its rowwise scales "<name>_scale" ([out], F32).
  static WeightLayout forModel(const ModelConfig &config, DType dtype,
                               bool fp8Linear = false);
  /// nullptr when absent.
  const WeightEntry *find(const std::string &name) const;
  /// The per-output-channel scales (F32, "<name>_scale") of an FP8 weight;
  /// nullptr when absent.
  const WeightEntry *scaleOf(const WeightEntry &weight) const;
  /// Whether `entry` is the scales of an FP8 weight.
  bool isScale(const WeightEntry &entry) const;
};

} // namespace cohere2c

#endif // COHERE2C_ARTIFACT_WEIGHTLAYOUT_H
