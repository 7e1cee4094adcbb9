//===- WeightLayout.cpp ---------------------------------------------------===//

#include "Artifact/WeightLayout.h"

namespace cohere2c {

WeightLayout WeightLayout::forModel(const ModelConfig &config, DType dtype,
                                    bool fp8Linear) {
  WeightLayout layout;
  auto add = [&](const std::string &name, const std::vector<int64_t> &shape,
                 DType entryType) {
    WeightEntry entry;
    entry.name = name;
    entry.shape = shape;
    entry.dtype = entryType;
    uint64_t elements = 1;
    for (int64_t d : shape)
      elements *= d;
    entry.numBytes = elements * dtypeSize(entryType);
    entry.offset = (layout.totalBytes + kAlignment - 1) / kAlignment * kAlignment;
    layout.totalBytes = entry.offset + entry.numBytes;
    layout.entries.push_back(std::move(entry));
  };
  for (const TensorSpec &spec : expectedTensors(config)) {
    bool linear = spec.name.size() > 12 &&
                  spec.name.compare(spec.name.size() - 12, 12, "_proj.weight") == 0;
    if (fp8Linear && linear) {
      add(spec.name, spec.shape, DType::F8E4M3);
      add(spec.name + "_scale", {spec.shape[0]}, DType::F32);
    } else {
      add(spec.name, spec.shape, dtype);
    }
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
