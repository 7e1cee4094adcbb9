//===- PrefixReuseTest.cpp - Prefix reuse across sliding and full layers --===//
//
// The case this project exists for: a request that shares a prefix with an
// earlier, longer one must read the same KV it would have computed alone,
// whatever the sliding window did meanwhile. Every served request is
// compared with the same request served alone with the prefix cache off:
// identical tokens and logits (the host target computes each row the same
// way, so the tolerance 1e-6 is only float noise).
//
//===----------------------------------------------------------------------===//

#include "ReferenceModel.h"
#include "host/HostExecutor.h"
#include "scheduler/Engine.h"

#include <gtest/gtest.h>

#include <cmath>

namespace cohere2c::test {
namespace {

class PrefixReuseTest : public ::testing::Test {
protected:
  void SetUp() override {
    model = ReferenceModel::load("tiny-cohere2"); // window 8
    ASSERT_TRUE(model->artifact && model->weights);
    ASSERT_EQ(model->artifact->manifest().config.slidingWindow, 8);
  }

  std::unique_ptr<Engine> engine(EngineOptions options) {
    auto created = HostExecutor::create(*model->artifact, *model->weights,
                                        options.numBlocks, options.blockSize);
    EXPECT_TRUE(created.ok()) << created.status().message();
    executors.push_back(std::move(*created));
    options.ignoreEos = true;
    auto e = Engine::create(*executors.back(), model->artifact->manifest(), options);
    EXPECT_TRUE(e.ok()) << e.status().message();
    return std::move(*e);
  }

  std::vector<RequestResult> serve(Engine &e, const std::vector<Request> &requests) {
    auto results = e.run(requests);
    EXPECT_TRUE(results.ok()) << results.status().message();
    return results.ok() ? *results : std::vector<RequestResult>();
  }

  /// `r` served alone on a fresh cache with the prefix cache off.
  RequestResult solo(const Request &r, int64_t blockSize) {
    EngineOptions options;
    options.blockSize = blockSize;
    options.numBlocks = 256;
    options.prefixCache = false;
    auto e = engine(options);
    return serve(*e, {r}).at(0);
  }

  /// Same tokens, and the logits rows `served` has (from its first row on)
  /// equal to the solo run's.
  void expectSameAsSolo(const RequestResult &served, const Request &r,
                        int64_t blockSize) {
    SCOPED_TRACE("request " + r.id);
    RequestResult alone = solo(r, blockSize);
    EXPECT_EQ(served.generatedIds, alone.generatedIds);
    int64_t vocab = model->artifact->manifest().config.vocabSize;
    int64_t rows = r.promptIds.size() + r.maxNewTokens - 1;
    ASSERT_EQ((int64_t)served.logits.size(), (rows - served.firstLogitsRow) * vocab);
    ASSERT_EQ((int64_t)alone.logits.size(), rows * vocab);
    double maxDiff = 0;
    for (size_t i = 0; i < served.logits.size(); ++i)
      maxDiff = std::max<double>(
          maxDiff, std::fabs(served.logits[i] -
                             alone.logits[served.firstLogitsRow * vocab + i]));
    EXPECT_LE(maxDiff, 1e-6);
  }

  static Request request(std::string id, std::vector<int32_t> prompt, int64_t n) {
    Request r;
    r.id = std::move(id);
    r.promptIds = std::move(prompt);
    r.maxNewTokens = n;
    r.recordLogits = true;
    return r;
  }

  /// The first n tokens of `base`, then `extra` tokens that differ from
  /// what follows in `base`.
  static std::vector<int32_t> diverge(const std::vector<int32_t> &base,
                                      size_t n, size_t extra) {
    std::vector<int32_t> out(base.begin(), base.begin() + n);
    for (size_t i = 0; i < extra; ++i) {
      int32_t t = 100 + (int32_t)(7 * i + n) % 300;
      if (n + i < base.size() && base[n + i] == t)
        ++t;
      out.push_back(t);
    }
    return out;
  }

  /// Serves X to completion, then Y on the same cache; returns Y's result.
  RequestResult xThenY(const Request &x, const Request &y, int64_t blockSize) {
    EngineOptions options;
    options.blockSize = blockSize;
    options.numBlocks = 256; // nothing is evicted
    auto e = engine(options);
    serve(*e, {x});
    return serve(*e, {y}).at(0);
  }

  std::unique_ptr<ReferenceModel> model;
  std::vector<std::unique_ptr<HostExecutor>> executors;
};

// The seed's case: X (40 prompt tokens, 40 generated) runs past the window;
// Y shares X's first 30 tokens. With B = 4, W = 8 the longest reusable
// prefix is L = 28: every block of [0, 28) is cached for the full layers and
// [21, 28) for the sliding ones.
TEST_F(PrefixReuseTest, SeedCaseReusesTwentyEightTokens) {
  Request x = request("X", model->prompts["len40"], 40);
  Request y = request("Y", diverge(model->prompts["len40"], 30, 10), 24);
  RequestResult served = xThenY(x, y, 4);
  EXPECT_EQ(served.cachedTokens, 28);
  expectSameAsSolo(served, y, 4);
}

// Y shares 6 tokens, fewer than the window: L = 4.
TEST_F(PrefixReuseTest, PrefixShorterThanTheWindow) {
  Request x = request("X", model->prompts["len40"], 8);
  Request y = request("Y", diverge(model->prompts["len40"], 6, 20), 8);
  RequestResult served = xThenY(x, y, 4);
  EXPECT_EQ(served.cachedTokens, 4);
  expectSameAsSolo(served, y, 4);
}

// Y shares exactly X's first 32 tokens (a block boundary) then diverges:
// all 8 blocks of [0, 32) are reusable, L = 32.
TEST_F(PrefixReuseTest, DivergesExactlyAtABlockBoundary) {
  Request x = request("X", model->prompts["len40"], 16);
  Request y = request("Y", diverge(model->prompts["len40"], 32, 9), 8);
  RequestResult served = xThenY(x, y, 4);
  EXPECT_EQ(served.cachedTokens, 32);
  expectSameAsSolo(served, y, 4);
}

// Y is exactly X's 40-token prompt: L must stay below Y's length, so 36.
TEST_F(PrefixReuseTest, WholePromptCachedStillComputesTheLastToken) {
  Request x = request("X", model->prompts["len40"], 4);
  Request y = request("Y", model->prompts["len40"], 8);
  RequestResult served = xThenY(x, y, 4);
  EXPECT_EQ(served.cachedTokens, 36);
  expectSameAsSolo(served, y, 4);
}

// B = 3 does not divide W = 8. Y shares 30 tokens: L = 30 (10 full blocks;
// the window of the query at 30 needs keys [23, 30): blocks 7, 8, 9).
TEST_F(PrefixReuseTest, BlockSizeNotDividingTheWindow) {
  Request x = request("X", model->prompts["len40"], 40);
  Request y = request("Y", diverge(model->prompts["len40"], 30, 10), 16);
  RequestResult served = xThenY(x, y, 3);
  EXPECT_EQ(served.cachedTokens, 30);
  expectSameAsSolo(served, y, 3);
}

// 16 requests sharing prefixes of two prompts, 4 in flight, a pool so small
// that cached blocks are evicted and running requests preempted: every
// output equals its solo run, and no block leaks.
TEST_F(PrefixReuseTest, SixteenInterleavedRequestsUnderMemoryPressure) {
  std::vector<Request> requests;
  const std::vector<int32_t> &a = model->prompts["len40"], &b = model->prompts["len100"];
  for (int i = 0; i < 16; ++i) {
    const std::vector<int32_t> &base = i % 2 ? b : a;
    size_t shared = 9 + (i * 5) % 30;
    requests.push_back(request("r" + std::to_string(i),
                               diverge(base, shared, 3 + i % 5), 6 + i % 7));
  }
  EngineOptions options;
  options.blockSize = 4;
  options.numBlocks = 34;
  options.maxBatch = 4;
  options.prefillChunk = 7;
  auto e = engine(options);
  std::vector<RequestResult> served = serve(*e, requests);
  ASSERT_EQ(served.size(), requests.size());
  EXPECT_GT(e->stats().preemptions, 0) << "the pool was meant to run out";
  int64_t reused = 0;
  for (size_t i = 0; i < requests.size(); ++i) {
    reused += served[i].cachedTokens;
    expectSameAsSolo(served[i], requests[i], options.blockSize);
  }
  EXPECT_GT(reused, 0) << "no request reused a cached prefix";
  const kv::KVCacheManager &cache = e->kvCache();
  EXPECT_EQ(cache.pool().numUsedBlocks(), 0);
  EXPECT_EQ(cache.pool().numFreeBlocks() + cache.pool().numEvictableBlocks(),
            options.numBlocks);
}

} // namespace
} // namespace cohere2c::test
