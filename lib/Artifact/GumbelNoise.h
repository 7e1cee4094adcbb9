//===- GumbelNoise.h - Temperature sampling as an argmax ------------------===//
//
// A token is drawn from softmax(logits / T) as the argmax over i of
// logits_i / T + g_i, the g_i independent standard Gumbel noise (the
// Gumbel-max trick: Gumbel, 1954; Maddison, Tarlow and Minka, "A*
// Sampling", NIPS 2014). An argmax needs no sort, no normalization and no
// order, so the device computes it for a whole batch in one pass over each
// row (the compiler's sample_tokens kernel) and the host (the runtime's
// gumbelMaxToken) gets the same token from the same row.
//
// The noise of index i for seed s: g = -log(-log(u)), u = ((z >> 12) + 0.5)
// * 2^-52 (exact, strictly inside (0, 1)), z = splitMix64(s, i), in double;
// the score is fma(logit, 1 / T, g) in double, rounded to f32, and the
// token is the lowest index of the largest score. The host's and the
// device's logarithms are each within an ulp of the exact value, not
// always equal; the rounding to f32 hides a difference unless a score lies
// at a rounding boundary, so the two pick different tokens only where two
// scores are within that rounding of each other. A request's k-th
// sampled token (k from 0) takes the seed splitMix64(request seed, k), so
// its tokens depend on its seed and its logits alone, not on its batch.
//
//===----------------------------------------------------------------------===//
#ifndef COHERE2C_ARTIFACT_GUMBELNOISE_H
#define COHERE2C_ARTIFACT_GUMBELNOISE_H

#include "Artifact/SplitMix64.h"

#include <cmath>
#include <cstdint>

namespace cohere2c {

/// Standard Gumbel noise of index i of `seed`'s stream.
inline double gumbelNoise(uint64_t seed, uint64_t i) {
  double u = ((double)(splitMix64(seed, i) >> 12) + 0.5) * 0x1p-52;
  return -std::log(-std::log(u));
}

/// The seed of the noise of a request's k-th sampled token.
inline uint64_t tokenNoiseSeed(uint64_t requestSeed, uint64_t k) {
  return splitMix64(requestSeed, k);
}

/// The score of a logit under temperature T > 0 (1 / T given).
inline float gumbelScore(float logit, double inverseTemperature, uint64_t seed,
                         uint64_t i) {
  return (float)std::fma((double)logit, inverseTemperature,
                         gumbelNoise(seed, i));
}

} // namespace cohere2c

#endif // COHERE2C_ARTIFACT_GUMBELNOISE_H
