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
  // In the order of expectedTensors, where the projections of one input are
  // adjacent (q, k, v, gate, up): one GEMM covers them. FP8 scales follow
  // each run of linear weights in the same order, so theirs are adjacent too.
  std::vector<TensorSpec> scales;
  auto flushScales = [&] {
    for (const TensorSpec &scale : scales)
      add(scale.name, scale.shape, DType::F32);
    scales.clear();
  };
  for (const TensorSpec &spec : expectedTensors(config)) {
    bool linear = spec.name.size() > 12 &&
                  spec.name.compare(spec.name.size() - 12, 12, "_proj.weight") == 0;
    if (fp8Linear && linear) {
      add(spec.name, spec.shape, DType::F8E4M3);
      scales.push_back({scaleNameOf(spec.name), {spec.shape[0]}});
    } else {
      flushScales();
      add(spec.name, spec.shape, dtype);
    }
  }
  flushScales();
  return layout;
}

const WeightEntry *WeightLayout::find(const std::string &name) const {
  for (const WeightEntry &entry : entries)
    if (entry.name == name)
      return &entry;
  return nullptr;
}

const WeightEntry *WeightLayout::scaleOf(const WeightEntry &weight) const {
  return find(scaleNameOf(weight.name));
}

bool WeightLayout::isScale(const WeightEntry &entry) const {
  if (entry.dtype != DType::F32)
    return false;
  const WeightEntry *weight = find(weightNameOfScale(entry.name));
  return weight && weight->dtype == DType::F8E4M3;
}

} // namespace cohere2c
