//===- Sampler.h - Next token from a row of logits ------------------------===//
#ifndef COHERE2C_RUNTIME_SCHEDULER_SAMPLER_H
#define COHERE2C_RUNTIME_SCHEDULER_SAMPLER_H

#include <cstdint>
#include <random>
#include <utility>
#include <vector>

namespace cohere2c {

/// Temperatures below this sample greedily (vLLM's threshold): 1 / T of
/// smaller ones overflows the scores.
inline constexpr double kGreedyBelowTemperature = 1e-5;
/// The largest temperature a request may ask for (Engine::validate).
inline constexpr double kMaxTemperature = 10000.0;

struct SamplingParams {
  /// 0 (or below kGreedyBelowTemperature) = greedy (argmax, the lowest id
  /// among equal maxima).
  double temperature = 0.0;
  /// Keep the k most likely tokens (0 = all).
  int64_t topK = 0;
  /// Keep the smallest set of most likely tokens whose probability reaches p
  /// (1 = all). Holtzman et al., "The Curious Case of Neural Text
  /// Degeneration", 2019.
  double topP = 1.0;
  uint64_t seed = 0;
};

/// The greedy token of a row of `vocab` f32 logits: the first index of its
/// largest value, or -1 if a value is NaN or infinite (or vocab is 0).
int32_t greedyToken(const float *logits, int64_t vocab);

/// A token drawn from softmax(logits / temperature) by the Gumbel-max trick
/// with the noise of `noiseSeed` (lib/Artifact/GumbelNoise.h): the first
/// index of the largest gumbelScore, as the cuda target's sample_tokens
/// kernel computes it (the f32 temperature it is given); greedyToken() at
/// temperature 0. -1 if a logit is NaN or infinite.
int32_t gumbelMaxToken(const float *logits, int64_t vocab, float temperature,
                       uint64_t noiseSeed);

/// The log-softmax of a row of `vocab` finite f32 logits at `token`, and
/// the `top` largest entries of it (largest first, ties by lower id).
/// Computed in double.
void logSoftmaxAt(const float *logits, int64_t vocab, int32_t token,
                  int32_t top, float &logprob,
                  std::vector<std::pair<int32_t, float>> &topEntries);

/// One per request: the random stream is the request's own, so a request
/// samples the same tokens whatever it is batched with.
class Sampler {
public:
  explicit Sampler(const SamplingParams &params)
      : params_(params), rng_(params.seed) {}
  /// Whether every token is greedy or gumbelMaxToken's: no top-k or top-p,
  /// so a device can sample it from the logits it computed.
  bool byArgmax() const;
  /// The noise seed of the request's k-th sampled token (k from 0).
  uint64_t noiseSeed(int64_t k) const;
  /// The temperature gumbelMaxToken is given: the request's as f32, 0
  /// where it samples greedily.
  float temperature() const;
  /// The request's k-th token from `logits` ([vocab] f32): gumbelMaxToken
  /// where byArgmax(), else drawn from the request's stream after top-k and
  /// top-p. Returns a token id in [0, vocab), or -1 if a logit is NaN or
  /// infinite (no distribution to sample from).
  int32_t sample(const float *logits, int64_t vocab, int64_t k);

private:
  SamplingParams params_;
  std::mt19937_64 rng_;
};

} // namespace cohere2c

#endif // COHERE2C_RUNTIME_SCHEDULER_SAMPLER_H
