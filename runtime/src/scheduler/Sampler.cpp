//===- Sampler.cpp --------------------------------------------------------===//

#include "scheduler/Sampler.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <vector>

namespace cohere2c {

namespace {

/// The first index of the largest of `n` values, as std::max_element (NaN
/// never the largest; index 0 if every value is NaN). The maximum is taken
/// over 16 independent running maxima, which the compiler keeps in vector
/// registers: std::max_element's one compare-and-branch chain took 0.5 ms
/// for a 256000-token vocabulary, a tenth of a decode step on the GPU.
int64_t argmax(const float *x, int64_t n) {
  constexpr int64_t kLanes = 16;
  float lane[kLanes];
  std::fill(lane, lane + kLanes, -std::numeric_limits<float>::infinity());
  int64_t i = 0;
  for (; i + kLanes <= n; i += kLanes)
    for (int64_t l = 0; l < kLanes; ++l)
      lane[l] = x[i + l] > lane[l] ? x[i + l] : lane[l];
  float best = -std::numeric_limits<float>::infinity();
  for (int64_t l = 0; l < kLanes; ++l)
    best = lane[l] > best ? lane[l] : best;
  for (; i < n; ++i)
    best = x[i] > best ? x[i] : best;
  for (int64_t j = 0; j < n; ++j)
    if (x[j] == best)
      return j;
  return 0;
}

} // namespace

int32_t Sampler::sample(const float *logits, int64_t vocab) {
  if (params_.temperature <= 0.0)
    return (int32_t)argmax(logits, vocab);
  std::vector<int32_t> order(vocab);
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(),
                   [&](int32_t a, int32_t b) { return logits[a] > logits[b]; });
  int64_t keep = params_.topK > 0 ? std::min<int64_t>(params_.topK, vocab) : vocab;
  // Softmax at the temperature over the kept candidates, most likely first.
  std::vector<double> probs(keep);
  double top = logits[order[0]], sum = 0;
  for (int64_t i = 0; i < keep; ++i)
    sum += probs[i] = std::exp((logits[order[i]] - top) / params_.temperature);
  double mass = 0;
  int64_t nucleus = keep;
  for (int64_t i = 0; i < keep; ++i) {
    mass += probs[i] / sum;
    if (mass >= params_.topP) {
      nucleus = i + 1;
      break;
    }
  }
  std::discrete_distribution<int64_t> pick(probs.begin(), probs.begin() + nucleus);
  return order[pick(rng_)];
}

} // namespace cohere2c
