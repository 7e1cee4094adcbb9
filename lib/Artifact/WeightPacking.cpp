//===- WeightPacking.cpp --------------------------------------------------===//

#include "Artifact/WeightPacking.h"

#include "Artifact/Precision.h"
#include "Support/ParallelFor.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>
#include <mutex>
#include <vector>

namespace cohere2c {

uint16_t floatToBF16(float value) {
  uint32_t bits;
  std::memcpy(&bits, &value, sizeof(bits));
  if ((bits & 0x7fffffffu) > 0x7f800000u) // NaN: keep it quiet and a NaN
    return (uint16_t)((bits >> 16) | 0x40);
  bits += 0x7fffu + ((bits >> 16) & 1u);
  return (uint16_t)(bits >> 16);
}

uint8_t floatToE4M3(float value) {
  uint8_t sign = std::signbit(value) ? 0x80 : 0;
  float a = std::fabs(value);
  if (std::isnan(value))
    return sign | 0x7F;
  if (a >= (float)kE4M3Max) // also what rounds beyond it: satfinite
    return sign | 0x7E;
  if (a < 0.015625f) { // below 2^-6: subnormals m * 2^-9, m in 0..8
    int m = (int)std::nearbyint(a * 512.0f);
    return sign | (uint8_t)m; // m = 8 encodes 2^-6, the smallest normal
  }
  int exponent;
  float fraction = std::frexp(a, &exponent); // a = fraction * 2^exponent, [0.5, 1)
  int e = exponent - 1;                       // a = (1 + m/8) 2^e
  int m = (int)std::nearbyint((fraction * 2.0f - 1.0f) * 8.0f);
  if (m == 8) {
    m = 0;
    ++e;
  }
  uint8_t bits = (uint8_t)(((e + 7) << 3) | m);
  return sign | (bits == 0x7F ? 0x7E : bits); // 0x7F is NaN: saturate
}

float quantizeRowE4M3(const float *values, int64_t n, uint8_t *out) {
  double amax = 0;
  for (int64_t i = 0; i < n; ++i)
    amax = std::max(amax, (double)std::fabs(values[i]));
  // In double, as the reference: values whose quotient is exactly halfway
  // between two e4m3 numbers (frequent for bf16 weights) must come out
  // halfway, so that rounding to even decides them as it does there.
  double scale = std::max(amax, kWeightAmaxFloor) / kE4M3Max;
  for (int64_t i = 0; i < n; ++i)
    out[i] = floatToE4M3((float)(values[i] / scale));
  return (float)scale;
}

namespace {

std::string shapeString(const std::vector<int64_t> &shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i)
    s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + "]";
}

/// The index of the first NaN or infinity among `n` values of `dtype` at
/// `data` (by their exponent bits: all ones), or -1.
int64_t firstNonFinite(DType dtype, const char *data, int64_t n) {
  auto scan = [&](auto type, auto mask) -> int64_t {
    using T = decltype(type);
    const T *v = reinterpret_cast<const T *>(data);
    for (int64_t i = 0; i < n; ++i)
      if ((v[i] & mask) == mask)
        return i;
    return -1;
  };
  switch (dtype) {
  case DType::F32:
    return scan(uint32_t{}, uint32_t{0x7F800000});
  case DType::BF16:
    return scan(uint16_t{}, uint16_t{0x7F80});
  case DType::F8E4M3: // no infinity; NaN is S.1111.111
    return scan(uint8_t{}, uint8_t{0x7F});
  default:
    return -1;
  }
}

} // namespace

Status packRows(const Checkpoint &checkpoint, const WeightEntry &entry,
                int64_t firstRow, int64_t endRow, char *rows, float *scales,
                const std::string &source) {
  const TensorView *tensor = checkpoint.find(entry.name);
  if (!tensor)
    return Status::error(source + ": tensor " + entry.name + " missing");
  if (tensor->shape != entry.shape)
    return Status::error(source + ": tensor " + entry.name + " has shape " +
                         shapeString(tensor->shape) + ", expected " +
                         shapeString(entry.shape));
  int64_t cols = entry.shape.back(), count = endRow - firstRow;
  int64_t allRows = tensor->numElements() / std::max<int64_t>(cols, 1);
  int64_t n = count * cols, first = firstRow * cols;
  // An FP8 checkpoint tensor comes with its rowwise scales.
  const TensorView *given = nullptr;
  if (tensor->dtype == DType::F8E4M3) {
    const std::string scaleName = scaleNameOf(entry.name);
    given = checkpoint.find(scaleName);
    if (!given || given->numElements() != allRows)
      return Status::error(source + ": F8_E4M3 tensor " + entry.name +
                           " needs its per-output-channel scales " + scaleName +
                           " with " + std::to_string(allRows) + " elements");
    // A scale is amax / 448 of its row, clamped away from zero by every
    // quantizer: zero, a negative, a subnormal or a non-finite value is a
    // broken export, whose row would be zeroed, negated or NaN.
    for (int64_t r = firstRow; r < endRow; ++r) {
      float scale = given->at(r);
      if (std::isfinite(scale) && scale >= std::numeric_limits<float>::min())
        continue;
      char shown[32] = "a non-finite value";
      if (std::isfinite(scale))
        std::snprintf(shown, sizeof shown, "%g", scale);
      return Status::error(source + ": tensor " + scaleName + " holds " +
                           shown + " at element " + std::to_string(r) +
                           "; a scale must be a positive normal float");
    }
  }
  auto value = [&](int64_t e) {
    float v = tensor->at(first + e);
    return given ? v * given->at((first + e) / cols) : v;
  };
  const char *src = static_cast<const char *>(tensor->data) + first * dtypeSize(tensor->dtype);
  switch (entry.dtype) {
  case DType::F32:
    if (tensor->dtype == DType::F32) {
      std::memcpy(rows, src, n * sizeof(float));
      break;
    }
    for (int64_t e = 0; e < n; ++e)
      reinterpret_cast<float *>(rows)[e] = value(e);
    break;
  case DType::BF16:
    if (tensor->dtype == DType::BF16) {
      std::memcpy(rows, src, n * sizeof(uint16_t));
      break;
    }
    for (int64_t e = 0; e < n; ++e)
      reinterpret_cast<uint16_t *>(rows)[e] = floatToBF16(value(e));
    break;
  case DType::F8E4M3: {
    auto *bytes = reinterpret_cast<uint8_t *>(rows);
    if (given) {
      std::memcpy(bytes, src, n);
      for (int64_t r = 0; r < count; ++r)
        scales[r] = given->at(firstRow + r);
      break;
    }
    std::vector<float> row(cols);
    for (int64_t r = 0; r < count; ++r) {
      for (int64_t c = 0; c < cols; ++c)
        row[c] = tensor->at(first + r * cols + c);
      scales[r] = quantizeRowE4M3(row.data(), cols, bytes + r * cols);
    }
    break;
  }
  default:
    return Status::error(std::string("weights stored as ") +
                         dtypeName(entry.dtype) + " cannot be packed");
  }
  // A NaN or infinity (in the checkpoint, or from a value beyond the
  // layout's range) would only show as garbage logits later.
  int64_t bad = firstNonFinite(entry.dtype, rows, n);
  if (bad < 0 && entry.dtype == DType::F8E4M3 &&
      firstNonFinite(DType::F32, reinterpret_cast<const char *>(scales), count) >= 0)
    return Status::error(source + ": tensor " + entry.name +
                         " has a non-finite rowwise scale");
  if (bad >= 0)
    return Status::error(source + ": tensor " + entry.name +
                         " holds a non-finite value (NaN or infinity) at element " +
                         std::to_string(first + bad) + " as " + dtypeName(entry.dtype));
  return Status::success();
}

Status packWeights(const Checkpoint &checkpoint, const WeightLayout &layout,
                   void *buffer, const std::string &source,
                   const ProgressFn &progress) {
  char *base = static_cast<char *>(buffer);
  std::memset(base, 0, layout.totalBytes);
  std::vector<const WeightEntry *> tensors; // the scales are written with their weight
  for (const WeightEntry &entry : layout.entries)
    if (!layout.isScale(entry))
      tensors.push_back(&entry);
  std::vector<Status> errors(tensors.size());
  std::mutex reporting;
  size_t done = 0;
  parallelFor(tensors.size(), [&](size_t i) {
    const WeightEntry &entry = *tensors[i];
    const WeightEntry *scales = layout.scaleOf(entry);
    errors[i] = packRows(checkpoint, entry, 0, entry.rows(), base + entry.offset,
                         scales ? reinterpret_cast<float *>(base + scales->offset) : nullptr,
                         source);
    std::lock_guard<std::mutex> lock(reporting);
    if (progress)
      progress(++done, tensors.size());
  });
  for (const Status &s : errors) // the first in layout order
    if (!s.ok())
      return s;
  return Status::success();
}

} // namespace cohere2c
