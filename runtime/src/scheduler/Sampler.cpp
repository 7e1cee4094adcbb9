//===- Sampler.cpp --------------------------------------------------------===//

#include "scheduler/Sampler.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <vector>

namespace cohere2c {

int32_t Sampler::sample(const float *logits, int64_t vocab) {
  if (params_.temperature <= 0.0)
    return (int32_t)(std::max_element(logits, logits + vocab) - logits);
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
