//===- SplitMix64.h - A counter-based stream of random 64-bit values ------===//
//
// Output i of splitmix64 seeded with `seed` (Steele, Lea and Flood, "Fast
// splittable pseudorandom number generators", OOPSLA 2014): its state
// advances by a constant, so any output is computed on its own, on the host
// or on the device (the compiler's kernels emit the same arithmetic). The
// seeded random weights (RandomWeights.h) and the sampling noise
// (GumbelNoise.h) draw from it.
//
//===----------------------------------------------------------------------===//
#ifndef COHERE2C_ARTIFACT_SPLITMIX64_H
#define COHERE2C_ARTIFACT_SPLITMIX64_H

#include <cstdint>

namespace cohere2c {

inline uint64_t splitMix64(uint64_t seed, uint64_t i) {
  uint64_t z = seed + (i + 1) * 0x9e3779b97f4a7c15ull;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

} // namespace cohere2c

#endif // COHERE2C_ARTIFACT_SPLITMIX64_H
