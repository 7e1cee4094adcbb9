//===- SamplerTest.cpp - Greedy, temperature, top-k and top-p sampling -----===//
//
// Expected values follow from the definitions: softmax at temperature T is
// exp(l / T) / sum; top-k keeps the k largest logits; top-p keeps the
// smallest most-likely set whose probability reaches p. Frequencies are
// checked over 20000 draws of a seeded stream, within 0.015 (more than
// four standard deviations of a frequency near 0.5).
//
//===----------------------------------------------------------------------===//

#include "scheduler/Sampler.h"
#include "Artifact/GumbelNoise.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

namespace cohere2c {
namespace {

std::vector<double> frequencies(SamplingParams params, const std::vector<float> &logits,
                                int draws = 20000) {
  Sampler sampler(params);
  std::vector<double> count(logits.size(), 0);
  for (int i = 0; i < draws; ++i)
    count[sampler.sample(logits.data(), logits.size(), i)] += 1.0 / draws;
  return count;
}

TEST(SamplerTest, GreedyTakesTheFirstLargest) {
  Sampler sampler(SamplingParams{});
  std::vector<float> logits = {0.5f, 2.0f, -1.0f, 2.0f};
  EXPECT_EQ(sampler.sample(logits.data(), logits.size(), 0), 1);
}

// A vocabulary's worth of values: the largest found in the vectorized body
// (ties: the first) and in the tail past the last 16; a NaN or infinite
// logit anywhere, in every mode, gives -1.
TEST(SamplerTest, GreedyTakesTheFirstLargestOfManyAndRefusesNonFinite) {
  Sampler sampler(SamplingParams{});
  std::vector<float> logits(1000);
  for (size_t i = 0; i < logits.size(); ++i)
    logits[i] = std::sin(0.37f * i); // in [-1, 1]
  logits[900] = 5.0f;
  logits[37] = 5.0f;
  EXPECT_EQ(sampler.sample(logits.data(), logits.size(), 0), 37);
  logits[995] = 6.0f; // 1000 = 62 x 16 + 8: in the tail
  EXPECT_EQ(sampler.sample(logits.data(), logits.size(), 0), 995);
  SamplingParams hot;
  hot.temperature = 1.0;
  Sampler warm(hot);
  for (float bad : {std::nanf(""), std::numeric_limits<float>::infinity(),
                    -std::numeric_limits<float>::infinity()})
    for (size_t at : {size_t(0), size_t(500), size_t(999)}) {
      std::vector<float> broken = logits;
      broken[at] = bad;
      EXPECT_EQ(sampler.sample(broken.data(), broken.size(), 0), -1)
          << bad << " at " << at;
      EXPECT_EQ(warm.sample(broken.data(), broken.size(), 0), -1)
          << bad << " at " << at;
    }
}

TEST(SamplerTest, TemperatureOneFollowsTheSoftmax) {
  // logits 0 and ln 3: probabilities 1/4 and 3/4.
  SamplingParams p;
  p.temperature = 1.0;
  p.seed = 7;
  std::vector<double> f = frequencies(p, {0.0f, std::log(3.0f)});
  EXPECT_NEAR(f[0], 0.25, 0.015);
  EXPECT_NEAR(f[1], 0.75, 0.015);
}

TEST(SamplerTest, TemperatureScalesTheLogits) {
  // At T = 2 the logits 0 and ln 9 act as 0 and ln 3: 1/4 and 3/4.
  SamplingParams p;
  p.temperature = 2.0;
  p.seed = 8;
  std::vector<double> f = frequencies(p, {0.0f, std::log(9.0f)});
  EXPECT_NEAR(f[1], 0.75, 0.015);
}

TEST(SamplerTest, TopKKeepsTheKLargest) {
  // Equal logits for ids 1 and 3, lower for 0 and 2: top-2 keeps 1 and 3 only.
  SamplingParams p;
  p.temperature = 1.0;
  p.topK = 2;
  p.seed = 9;
  std::vector<double> f = frequencies(p, {0.0f, 1.0f, 0.0f, 1.0f});
  EXPECT_EQ(f[0], 0.0);
  EXPECT_EQ(f[2], 0.0);
  EXPECT_NEAR(f[1], 0.5, 0.015);
}

TEST(SamplerTest, TopPKeepsTheSmallestSetReachingP) {
  // Probabilities 0.5, 0.3, 0.2: p = 0.7 keeps {0.5, 0.3} -> 5/8 and 3/8.
  SamplingParams p;
  p.temperature = 1.0;
  p.topP = 0.7;
  p.seed = 10;
  std::vector<double> f =
      frequencies(p, {std::log(0.5f), std::log(0.3f), std::log(0.2f)});
  EXPECT_EQ(f[2], 0.0);
  EXPECT_NEAR(f[0], 0.625, 0.015);
  EXPECT_NEAR(f[1], 0.375, 0.015);
}

// The definition, by a full sort: the top-k (ties: lower id first), then
// the smallest most likely prefix whose probability reaches p; each kept
// id's probability renormalized over that prefix.
std::vector<double> keptDistribution(const std::vector<float> &logits, double temperature,
                                     int64_t topK, double topP) {
  std::vector<int> order(logits.size());
  for (size_t i = 0; i < order.size(); ++i)
    order[i] = (int)i;
  std::stable_sort(order.begin(), order.end(),
                   [&](int a, int b) { return logits[a] > logits[b]; });
  size_t keep = topK > 0 ? std::min<size_t>(topK, order.size()) : order.size();
  std::vector<double> w(keep);
  double z = 0;
  for (size_t i = 0; i < keep; ++i)
    z += w[i] = std::exp((logits[order[i]] - logits[order[0]]) / temperature);
  size_t size = keep;
  double mass = 0;
  for (size_t i = 0; i < keep; ++i)
    if ((mass += w[i] / z) >= topP) {
      size = i + 1;
      break;
    }
  double kept = 0;
  for (size_t i = 0; i < size; ++i)
    kept += w[i];
  std::vector<double> p(logits.size(), 0.0);
  for (size_t i = 0; i < size; ++i)
    p[order[i]] = w[i] / kept;
  return p;
}

// Vocabularies large enough that the sampler selects candidates rather than
// sorting: nuclei of about 115 and 80 ids (more than the first 64
// selected), the second inside a top-k, and all ids at a temperature. Shuffled
// logits -0.02 i: probabilities in a geometric progression.
TEST(SamplerTest, LargeVocabulariesFollowTheDefinition) {
  std::vector<float> logits(4096);
  for (size_t i = 0; i < logits.size(); ++i)
    logits[(i * 2654435761u) % logits.size()] = -0.02f * (float)i;
  struct Case {
    double temperature;
    int64_t topK;
    double topP;
  };
  for (Case c : {Case{1.0, 0, 0.9}, Case{1.0, 300, 0.8}, Case{2.0, 0, 1.0}}) {
    SamplingParams p;
    p.temperature = c.temperature;
    p.topK = c.topK;
    p.topP = c.topP;
    p.seed = 12;
    std::vector<double> expected = keptDistribution(logits, c.temperature, c.topK, c.topP);
    std::vector<double> f = frequencies(p, logits);
    // Single ids are rare; the ids past the 64 most likely (logit below
    // -0.02 x 64) weigh 0.1 or more in every case.
    double tailExpected = 0, tail = 0;
    for (size_t id = 0; id < logits.size(); ++id) {
      if (expected[id] == 0.0)
        ASSERT_EQ(f[id], 0.0) << "id " << id << " is outside the kept set";
      else
        ASSERT_NEAR(f[id], expected[id], 0.015) << "id " << id;
      if (logits[id] < -0.02f * 63.5f)
        tailExpected += expected[id], tail += f[id];
    }
    EXPECT_GT(tailExpected, 0.09);
    EXPECT_NEAR(tail, tailExpected, 0.015);
  }
}

// exp(logits) 1, 3, 2, 2: Z = 8; the top entries by probability, ties by
// the lower id; none asked, none given.
TEST(SamplerTest, LogSoftmaxAtGivesTheTokenAndTheMostLikely) {
  std::vector<float> logits = {0.0f, std::log(3.0f), std::log(2.0f), std::log(2.0f)};
  float logprob = 0;
  std::vector<std::pair<int32_t, float>> top;
  logSoftmaxAt(logits.data(), 4, 1, 3, logprob, top);
  EXPECT_NEAR(logprob, std::log(3.0 / 8), 1e-6);
  ASSERT_EQ(top.size(), 3u);
  EXPECT_EQ(top[0].first, 1);
  EXPECT_EQ(top[1].first, 2);
  EXPECT_EQ(top[2].first, 3);
  EXPECT_NEAR(top[2].second, std::log(2.0 / 8), 1e-6);
  logSoftmaxAt(logits.data(), 4, 0, 0, logprob, top);
  EXPECT_NEAR(logprob, std::log(1.0 / 8), 1e-6);
  EXPECT_TRUE(top.empty());
  // More asked than there are ids: all of them.
  logSoftmaxAt(logits.data(), 4, 0, 20, logprob, top);
  EXPECT_EQ(top.size(), 4u);
}

// Over 50,000 ids, the 20 most likely are those of a full sort.
TEST(SamplerTest, LogSoftmaxAtTopMatchesASort) {
  std::vector<float> logits(50000);
  for (size_t i = 0; i < logits.size(); ++i)
    logits[i] = std::sin(0.7f * i) * 5.0f + (float)(i % 7);
  std::vector<int32_t> order(logits.size());
  for (size_t i = 0; i < order.size(); ++i)
    order[i] = (int32_t)i;
  std::stable_sort(order.begin(), order.end(),
                   [&](int32_t a, int32_t b) { return logits[a] > logits[b]; });
  float logprob = 0;
  std::vector<std::pair<int32_t, float>> top;
  logSoftmaxAt(logits.data(), logits.size(), 0, 20, logprob, top);
  ASSERT_EQ(top.size(), 20u);
  for (size_t i = 0; i < 20; ++i)
    EXPECT_EQ(top[i].first, order[i]) << "rank " << i;
}

TEST(SamplerTest, SameSeedSameTokens) {
  SamplingParams p;
  p.temperature = 1.0;
  p.seed = 11;
  std::vector<float> logits = {0.1f, 0.2f, 0.3f, 0.4f};
  Sampler a(p), b(p);
  for (int i = 0; i < 100; ++i)
    EXPECT_EQ(a.sample(logits.data(), 4, i), b.sample(logits.data(), 4, i));
}

// The noise is standard Gumbel: mean the Euler-Mascheroni constant, variance
// pi^2 / 6, P(g <= 0) = exp(-1); draws of other seeds and indices differ.
TEST(SamplerTest, GumbelNoiseIsStandardGumbel) {
  const int n = 200000;
  double sum = 0, squares = 0, atMostZero = 0;
  for (int i = 0; i < n; ++i) {
    double g = gumbelNoise(tokenNoiseSeed(5, i / 1000), i % 1000);
    sum += g, squares += g * g, atMostZero += g <= 0;
  }
  double mean = sum / n, variance = squares / n - mean * mean;
  EXPECT_NEAR(mean, 0.5772156649, 0.01);
  EXPECT_NEAR(variance, M_PI * M_PI / 6, 0.03);
  EXPECT_NEAR(atMostZero / n, std::exp(-1.0), 0.005);
  EXPECT_NE(gumbelNoise(tokenNoiseSeed(5, 0), 0),
            gumbelNoise(tokenNoiseSeed(6, 0), 0));
  EXPECT_NE(gumbelNoise(tokenNoiseSeed(5, 0), 0),
            gumbelNoise(tokenNoiseSeed(5, 1), 0));
}

// Temperature sampling is an argmax of logit / T + noise, one pass: what the
// cuda target's sample_tokens kernel computes from the same seeds. Over the
// k-th tokens of many seeds it follows the softmax at T; at T = 0 it is the
// greedy token, and so is a request's below kGreedyBelowTemperature (where
// 1 / T would overflow the scores).
TEST(SamplerTest, GumbelMaxFollowsTheSoftmax) {
  std::vector<float> logits = {1.0f, 0.0f, std::log(2.0f) + 1.0f, -30.0f};
  std::vector<double> expected(4);
  double z = 0;
  for (size_t i = 0; i < 4; ++i)
    z += expected[i] = std::exp(logits[i] / 0.5);
  std::vector<double> count(4, 0);
  const int n = 40000;
  for (int k = 0; k < n; ++k)
    count[gumbelMaxToken(logits.data(), 4, 0.5f,
                         tokenNoiseSeed(k % 97, k / 97))] += 1.0 / n;
  for (size_t i = 0; i < 4; ++i)
    EXPECT_NEAR(count[i], expected[i] / z, 0.01) << "id " << i;
  EXPECT_EQ(gumbelMaxToken(logits.data(), 4, 0.0f, 123), 2);
  SamplingParams tiny;
  tiny.temperature = 1e-50;
  Sampler cold(tiny);
  EXPECT_TRUE(cold.byArgmax());
  EXPECT_EQ(cold.temperature(), 0.0f);
  for (int k = 0; k < 20; ++k)
    EXPECT_EQ(cold.sample(logits.data(), 4, k), 2);
}

} // namespace
} // namespace cohere2c
