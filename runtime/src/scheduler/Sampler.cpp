//===- Sampler.cpp --------------------------------------------------------===//

#include "scheduler/Sampler.h"

#include "Artifact/GumbelNoise.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <queue>
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

namespace {

/// Up to this many most likely ids are found through a heap.
constexpr int64_t kHeapSelection = 4096;

/// The `count` most likely ids of `logits`, most likely first (ties: the
/// lower id first, as a stable sort by logit would give). Few of them: the
/// count-th largest logit from a min-heap of the largest seen (most logits
/// fail its one comparison), then the ids at or above it; many: selection
/// (nth_element) over (logit, id) pairs. Either way the selected are sorted.
/// Sorting a whole row of 256,000 ids took 29 to 37 ms on the build
/// machine (bench/RESULTS.md).
std::vector<int32_t> mostLikely(const float *logits, int64_t vocab, int64_t count) {
  struct Entry {
    float logit;
    int32_t id;
  };
  auto before = [](const Entry &a, const Entry &b) {
    return a.logit > b.logit || (a.logit == b.logit && a.id < b.id);
  };
  if (count <= 0)
    return {};
  std::vector<Entry> entries;
  if (count <= kHeapSelection && count < vocab) {
    std::priority_queue<float, std::vector<float>, std::greater<float>> largest;
    for (int64_t i = 0; i < vocab; ++i)
      if ((int64_t)largest.size() < count)
        largest.push(logits[i]);
      else if (logits[i] > largest.top()) {
        largest.pop();
        largest.push(logits[i]);
      }
    float least = largest.top();
    for (int64_t i = 0; i < vocab; ++i)
      if (logits[i] >= least)
        entries.push_back({logits[i], (int32_t)i});
  } else {
    entries.resize(vocab);
    for (int64_t i = 0; i < vocab; ++i)
      entries[i] = {logits[i], (int32_t)i};
    if (count < vocab)
      std::nth_element(entries.begin(), entries.begin() + count, entries.end(), before);
  }
  std::sort(entries.begin(), entries.end(), before);
  entries.resize(std::min<int64_t>(count, entries.size()));
  std::vector<int32_t> ids(entries.size());
  for (size_t i = 0; i < entries.size(); ++i)
    ids[i] = entries[i].id;
  return ids;
}

} // namespace

void logSoftmaxAt(const float *logits, int64_t vocab, int32_t token,
                  int32_t top, float &logprob,
                  std::vector<std::pair<int32_t, float>> &topEntries) {
  double max = *std::max_element(logits, logits + vocab), sum = 0;
  for (int64_t i = 0; i < vocab; ++i)
    sum += std::exp((double)logits[i] - max);
  double logZ = max + std::log(sum);
  logprob = (float)(logits[token] - logZ);
  topEntries.clear();
  for (int32_t id : mostLikely(logits, vocab, std::min<int64_t>(std::max(top, 0), vocab)))
    topEntries.push_back({id, (float)(logits[id] - logZ)});
}

int32_t gumbelMaxToken(const float *logits, int64_t vocab, float temperature,
                       uint64_t noiseSeed) {
  if (!(temperature > 0.0f))
    return greedyToken(logits, vocab);
  // The device kernel's formula (GumbelNoise.h), ties to the lower index;
  // a sum of x * 0 checks the logits on the way, as greedyToken's does.
  double inverseT = 1.0 / (double)temperature;
  float best = -std::numeric_limits<float>::infinity(), check = 0.0f;
  int32_t at = 0;
  for (int64_t i = 0; i < vocab; ++i) {
    float score = gumbelScore(logits[i], inverseT, noiseSeed, i);
    check += logits[i] * 0.0f;
    if (score > best)
      best = score, at = (int32_t)i;
  }
  return check == 0.0f && vocab > 0 ? at : -1;
}

bool Sampler::byArgmax() const {
  return temperature() == 0.0f || (params_.topK <= 0 && params_.topP >= 1.0);
}

float Sampler::temperature() const {
  return params_.temperature < kGreedyBelowTemperature
             ? 0.0f
             : (float)params_.temperature;
}

uint64_t Sampler::noiseSeed(int64_t k) const {
  return tokenNoiseSeed(params_.seed, k);
}

int32_t Sampler::sample(const float *logits, int64_t vocab, int64_t k) {
  if (byArgmax())
    return gumbelMaxToken(logits, vocab, temperature(), noiseSeed(k));
  int32_t greedy = greedyToken(logits, vocab);
  if (greedy < 0)
    return greedy;
  // The kept ids: the top-k (or all), with their weights exp((l - max) / T)
  // and the sum Z of those weights.
  double top = logits[greedy];
  auto weight = [&](int32_t id) { return std::exp((logits[id] - top) / params_.temperature); };
  int64_t keep = params_.topK > 0 ? std::min<int64_t>(params_.topK, vocab) : vocab;
  bool nucleus = params_.topP < 1.0;
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
