//===- WeightPacking.cpp --------------------------------------------------===//

#include "Artifact/WeightPacking.h"

#include <cstring>

namespace cohere2c {

uint16_t floatToBF16(float value) {
  uint32_t bits;
  std::memcpy(&bits, &value, sizeof(bits));
  if ((bits & 0x7fffffffu) > 0x7f800000u) // NaN: keep it quiet and a NaN
    return (uint16_t)((bits >> 16) | 0x40);
  bits += 0x7fffu + ((bits >> 16) & 1u);
  return (uint16_t)(bits >> 16);
}

namespace {

std::string shapeString(const std::vector<int64_t> &shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i)
    s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + "]";
}

} // namespace

Status packWeights(const Checkpoint &checkpoint, const WeightLayout &layout,
                   void *buffer, const std::string &source,
                   const ProgressFn &progress) {
  char *base = static_cast<char *>(buffer);
  std::memset(base, 0, layout.totalBytes);
  for (size_t i = 0; i < layout.entries.size(); ++i) {
    const WeightEntry &entry = layout.entries[i];
    const TensorView *tensor = checkpoint.find(entry.name);
    if (!tensor)
      return Status::error(source + ": tensor " + entry.name + " missing");
    if (tensor->shape != entry.shape)
      return Status::error(source + ": tensor " + entry.name + " has shape " +
                           shapeString(tensor->shape) + ", expected " +
                           shapeString(entry.shape));
    int64_t n = tensor->numElements();
    char *dst = base + entry.offset;
    switch (entry.dtype) {
    case DType::F32:
      if (tensor->dtype == DType::F32) {
        std::memcpy(dst, tensor->data, n * sizeof(float));
        break;
      }
      for (int64_t e = 0; e < n; ++e)
        reinterpret_cast<float *>(dst)[e] = tensor->at(e);
      break;
    case DType::BF16:
      if (tensor->dtype == DType::BF16) {
        std::memcpy(dst, tensor->data, n * sizeof(uint16_t));
        break;
      }
      for (int64_t e = 0; e < n; ++e)
        reinterpret_cast<uint16_t *>(dst)[e] = floatToBF16(tensor->at(e));
      break;
    default:
      return Status::error(std::string("weights stored as ") +
                           dtypeName(entry.dtype) + " cannot be packed");
    }
    if (progress)
      progress(i + 1, layout.entries.size());
  }
  return Status::success();
}

} // namespace cohere2c
