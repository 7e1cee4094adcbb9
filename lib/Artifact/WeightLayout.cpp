//===- WeightLayout.cpp ---------------------------------------------------===//

#include "Artifact/WeightLayout.h"

namespace cohere2c {

WeightLayout WeightLayout::forModel(const ModelConfig &config, DType dtype) {
  WeightLayout layout;
  for (const TensorSpec &spec : expectedTensors(config)) {
    WeightEntry entry;
    entry.name = spec.name;
    entry.shape = spec.shape;
    entry.dtype = dtype;
    uint64_t elements = 1;
    for (int64_t d : spec.shape)
      elements *= d;
    entry.numBytes = elements * dtypeSize(dtype);
    entry.offset = (layout.totalBytes + kAlignment - 1) / kAlignment * kAlignment;
    layout.totalBytes = entry.offset + entry.numBytes;
    layout.entries.push_back(std::move(entry));
  }
  return layout;
}

const WeightEntry *WeightLayout::find(const std::string &name) const {
  for (const WeightEntry &entry : entries)
    if (entry.name == name)
      return &entry;
  return nullptr;
}

} // namespace cohere2c
