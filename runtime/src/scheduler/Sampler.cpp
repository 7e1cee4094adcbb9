//===- Sampler.cpp --------------------------------------------------------===//

#include "scheduler/Sampler.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <vector>

namespace cohere2c {

/// As std::max_element, but one pass over 16 lanes, each with its
/// running maximum and where it first occurred, which the compiler keeps in
/// vector registers; a sum of x * 0 (NaN for NaN or infinite x) checks the
/// values on the way. std::max_element's one compare-and-branch chain is
/// 2.5 times slower (0.354 against 0.139 ms for a 256000-token row on the
/// build machine).
int32_t greedyToken(const float *x, int64_t n) {
  constexpr int64_t kLanes = 16;
  float lane[kLanes], zero[kLanes] = {};
  int32_t at[kLanes] = {};
  std::fill(lane, lane + kLanes, -std::numeric_limits<float>::infinity());
  int64_t i = 0;
  for (; i + kLanes <= n; i += kLanes)
    for (int64_t l = 0; l < kLanes; ++l) {
      float v = x[i + l];
      bool larger = v > lane[l];
      lane[l] = larger ? v : lane[l];
      at[l] = larger ? (int32_t)(i + l) : at[l];
      zero[l] += v * 0.0f;
    }
  // Across lanes the lowest index among equal maxima; the tail's indices
  // come after every lane's.
  float best = -std::numeric_limits<float>::infinity(), check = 0.0f;
  int64_t bestAt = 0;
  for (int64_t l = 0; l < kLanes; ++l) {
    check += zero[l];
    if (lane[l] > best || (lane[l] == best && at[l] < bestAt))
      best = lane[l], bestAt = at[l];
  }
  for (; i < n; ++i) {
    check += x[i] * 0.0f;
    if (x[i] > best)
      best = x[i], bestAt = i;
  }
  return check == 0.0f && n > 0 ? (int32_t)bestAt : -1;
}

void logSoftmaxAt(const float *logits, int64_t vocab, int32_t token,
                  int32_t top, float &logprob,
                  std::vector<std::pair<int32_t, float>> &topEntries) {
  double max = *std::max_element(logits, logits + vocab), sum = 0;
  for (int64_t i = 0; i < vocab; ++i)
    sum += std::exp((double)logits[i] - max);
  double logZ = max + std::log(sum);
  logprob = (float)(logits[token] - logZ);
  std::vector<int32_t> order(vocab);
  std::iota(order.begin(), order.end(), 0);
  int64_t keep = std::min<int64_t>(std::max(top, 0), vocab);
  std::partial_sort(order.begin(), order.begin() + keep, order.end(),
                    [&](int32_t a, int32_t b) {
                      return logits[a] > logits[b] ||
                             (logits[a] == logits[b] && a < b);
                    });
  topEntries.clear();
  for (int64_t i = 0; i < keep; ++i)
    topEntries.push_back({order[i], (float)(logits[order[i]] - logZ)});
}

namespace {

/// The `count` most likely ids of `logits`, most likely first (ties: the
/// lower id first, as a stable sort by logit would give), by selection and a
/// sort of the selected: O(vocab + count log count). Sorting a whole row of
/// 256,000 ids took 29 to 37 ms a row on the build machine; sampling now
/// takes 3 to 8 ms (temperature 0.7 with top-k 50, top-p 0.9 or neither).
std::vector<int32_t> mostLikely(const float *logits, int64_t vocab, int64_t count) {
  std::vector<int32_t> ids(vocab);
  std::iota(ids.begin(), ids.end(), 0);
  auto before = [&](int32_t a, int32_t b) {
    return logits[a] > logits[b] || (logits[a] == logits[b] && a < b);
  };
  if (count < vocab)
    std::nth_element(ids.begin(), ids.begin() + count, ids.end(), before);
  ids.resize(count);
  std::sort(ids.begin(), ids.end(), before);
  return ids;
}

} // namespace

int32_t Sampler::sample(const float *logits, int64_t vocab) {
  int32_t greedy = greedyToken(logits, vocab);
  if (greedy < 0 || params_.temperature <= 0.0)
    return greedy;
  // The kept ids: the top-k (or all), with their weights exp((l - max) / T)
  // and the sum Z of those weights.
  double top = logits[greedy];
  auto weight = [&](int32_t id) { return std::exp((logits[id] - top) / params_.temperature); };
  int64_t keep = params_.topK > 0 ? std::min<int64_t>(params_.topK, vocab) : vocab;
  bool nucleus = params_.topP < 1.0;
  if (keep == vocab && !nucleus) {
    // Every id in id order: the same distribution, with no order to find.
    std::vector<double> weights(vocab);
    for (int64_t i = 0; i < vocab; ++i)
      weights[i] = weight((int32_t)i);
    std::discrete_distribution<int64_t> pick(weights.begin(), weights.end());
    return (int32_t)pick(rng_);
  }
  double z = 0;
  if (keep == vocab)
    for (int64_t i = 0; i < vocab; ++i)
      z += weight((int32_t)i);
  // The most likely ids, as many as the nucleus needs: the smallest
  // most-likely set whose probability reaches p (Holtzman et al., 2019).
  // Without top-k, candidates are selected in growing numbers, since a
  // trained model's nucleus is usually far smaller than its vocabulary;
  // with it, all k are (Z is their sum).
  for (int64_t count = keep == vocab ? 64 : keep;; count *= 8) {
    count = std::min(count, keep);
    std::vector<int32_t> ids = mostLikely(logits, vocab, count);
    std::vector<double> weights(count);
    for (int64_t i = 0; i < count; ++i)
      weights[i] = weight(ids[i]);
    if (keep < vocab)
      z = std::accumulate(weights.begin(), weights.end(), 0.0);
    int64_t size = count;
    if (nucleus) {
      double mass = 0;
      size = -1;
      for (int64_t i = 0; i < count && size < 0; ++i)
        if ((mass += weights[i] / z) >= params_.topP)
          size = i + 1;
      if (size < 0 && count < keep)
        continue; // the nucleus is larger than these candidates
      if (size < 0)
        size = keep;
    }
    std::discrete_distribution<int64_t> pick(weights.begin(), weights.begin() + size);
    return ids[pick(rng_)];
  }
}

} // namespace cohere2c
