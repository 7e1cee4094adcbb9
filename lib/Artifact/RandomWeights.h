//===- RandomWeights.h - Seeded random weights of a model's layout --------===//
//
// Real-shape runs without a checkpoint (tests, benchmarks) bind weights drawn
// from one seeded stream: value i of the stream is splitmix64's output i
// (Steele, Lea and Flood, "Fast splittable pseudorandom number generators",
// OOPSLA 2014), mapped to a double in [-1, 1). Its state advances by a
// constant, so any value is computed on its own: the host fills rows in
// parallel, and the cuda target's weight-fill kernels (AttnToGPU,
// WeightFillKernels.cpp) compute the same bits on the device.
//
// Entry e of the layout (scales skipped) takes the stream's values from the
// sum of the element counts of the entries before it. Norm weights are
// 1 + 0.1 u, every other weight a u with a = 0.02 * sqrt(3) (standard
// deviation 0.02, Cohere's initializer range), each computed in double and
// rounded to f32, then to the entry's dtype (bf16: round to nearest even;
// F8E4M3: rowwise, quantizeRowE4M3 of the f32 row).
//
//===----------------------------------------------------------------------===//
#ifndef COHERE2C_ARTIFACT_RANDOMWEIGHTS_H
#define COHERE2C_ARTIFACT_RANDOMWEIGHTS_H

#include "Artifact/SplitMix64.h"
#include "Artifact/WeightLayout.h"

#include <cstdint>
#include <vector>

namespace cohere2c {

/// Value i of the stream of `seed`, in [-1, 1) with 52 random bits.
inline double randomUniform(uint64_t seed, uint64_t i) {
  return (double)(splitMix64(seed, i) >> 11) / (double)(1ull << 52) - 1.0;
}

/// An entry's values are offset + scale * u, in double, rounded to f32.
struct RandomAffine {
  double scale = 0, offset = 0;
};
RandomAffine randomAffineOf(const WeightEntry &entry);

/// The stream index of each entry's first value, by entry (scales: unused).
std::vector<uint64_t> randomStreamStarts(const WeightLayout &layout);

/// Rows [firstRow, endRow) of `entry` (rows of its last dimension) into
/// `rows` (the entry's bytes from firstRow on), and for an F8E4M3 entry
/// their scales into `scales` (one f32 per row, from firstRow on).
/// `streamStart`: the entry's randomStreamStarts value.
void fillRandomRows(const WeightEntry &entry, uint64_t seed, uint64_t streamStart,
                    int64_t firstRow, int64_t endRow, char *rows, float *scales);

/// Every entry of `layout` into `buffer` (layout.totalBytes, zeroed), in
/// parallel on the machine's cores.
void fillRandomWeights(const WeightLayout &layout, uint64_t seed, char *buffer);

} // namespace cohere2c

#endif // COHERE2C_ARTIFACT_RANDOMWEIGHTS_H
