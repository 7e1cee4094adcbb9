//===- RandomWeights.cpp --------------------------------------------------===//

#include "Artifact/RandomWeights.h"

#include "Artifact/WeightPacking.h"
#include "Support/ParallelFor.h"

#include <algorithm>
#include <cmath>

namespace cohere2c {

RandomAffine randomAffineOf(const WeightEntry &entry) {
  if (entry.name.find("norm") != std::string::npos)
    return {0.1, 1.0};
  return {0.02 * std::sqrt(3.0), 0.0};
}

std::vector<uint64_t> randomStreamStarts(const WeightLayout &layout) {
  std::vector<uint64_t> starts(layout.entries.size(), 0);
  uint64_t stream = 0;
  for (size_t i = 0; i < layout.entries.size(); ++i) {
    const WeightEntry &entry = layout.entries[i];
    starts[i] = stream;
    if (!layout.isScale(entry))
      stream += entry.numBytes / dtypeSize(entry.dtype);
  }
  return starts;
}

void fillRandomRows(const WeightEntry &entry, uint64_t seed, uint64_t streamStart,
                    int64_t firstRow, int64_t endRow, char *rows, float *scales) {
  int64_t cols = entry.shape.back();
  RandomAffine affine = randomAffineOf(entry);
  auto value = [&](int64_t row, int64_t col) {
    uint64_t i = streamStart + (uint64_t)row * cols + col;
    return (float)(affine.offset + affine.scale * randomUniform(seed, i));
  };
  std::vector<float> row(cols);
  for (int64_t r = firstRow; r < endRow; ++r) {
    char *out = rows + (r - firstRow) * cols * dtypeSize(entry.dtype);
    for (int64_t c = 0; c < cols; ++c)
      row[c] = value(r, c);
    switch (entry.dtype) {
    case DType::F8E4M3:
      scales[r - firstRow] =
          quantizeRowE4M3(row.data(), cols, reinterpret_cast<uint8_t *>(out));
      break;
    case DType::F32:
      std::copy(row.begin(), row.end(), reinterpret_cast<float *>(out));
      break;
    default:
      for (int64_t c = 0; c < cols; ++c)
        reinterpret_cast<uint16_t *>(out)[c] = floatToBF16(row[c]);
    }
  }
}

void fillRandomWeights(const WeightLayout &layout, uint64_t seed, char *buffer) {
  struct Chunk {
    size_t entry;
    int64_t firstRow, endRow;
  };
  std::vector<uint64_t> starts = randomStreamStarts(layout);
  std::vector<Chunk> chunks;
  for (size_t e = 0; e < layout.entries.size(); ++e) {
    const WeightEntry &entry = layout.entries[e];
    if (layout.isScale(entry))
      continue; // written with its weight
    int64_t cols = entry.shape.back(), rows = entry.rows();
    int64_t rowsPerChunk = std::max<int64_t>(1, (int64_t(1) << 20) / cols);
    for (int64_t r = 0; r < rows; r += rowsPerChunk)
      chunks.push_back({e, r, std::min(rows, r + rowsPerChunk)});
  }
  parallelFor(chunks.size(), [&](size_t i) {
    const Chunk &c = chunks[i];
    const WeightEntry &entry = layout.entries[c.entry];
    int64_t rowBytes = entry.shape.back() * dtypeSize(entry.dtype);
    const WeightEntry *scales = layout.scaleOf(entry);
    fillRandomRows(entry, seed, starts[c.entry], c.firstRow, c.endRow,
                   buffer + entry.offset + c.firstRow * rowBytes,
                   scales ? reinterpret_cast<float *>(buffer + scales->offset) + c.firstRow
                          : nullptr);
  });
}

} // namespace cohere2c
