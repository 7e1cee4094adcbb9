//===- EngineStepTest.cpp - The engine served step by step ----------------===//
//
// What a server does with the engine: requests submitted while others run,
// requests cancelled mid-generation, tokens reported as they are sampled,
// log probabilities. Each served request must equal the same request run
// alone (tokens), a cancelled one must leave every block free or cached,
// and the reported log probabilities must equal a float64 log-softmax of
// the logits the engine computed.
//
//===----------------------------------------------------------------------===//

#include "ReferenceModel.h"
#include "host/HostExecutor.h"
#include "scheduler/Engine.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

namespace cohere2c::test {
namespace {

/// Records the tokens of each step, then runs it on `inner`.
struct StepRecorder : Executor {
  Executor *inner = nullptr;
  std::vector<StepInput> steps;
  Status run(const StepInput &input, StepOutput &output) override {
    steps.push_back(input);
    return inner->run(input, output);
  }
  int64_t bytesPerBlock() const override { return inner->bytesPerBlock(); }
};

class EngineStepTest : public ::testing::Test {
protected:
  void SetUp() override {
    model = ReferenceModel::load("tiny-cohere2");
    ASSERT_TRUE(model->artifact && model->weights);
  }

  /// Steps through `recorder` when given (it sees each step's input first).
  std::unique_ptr<Engine> engine(int64_t maxBatch,
                                 int64_t maxStepTokens = kDefaultMaxStepTokens,
                                 StepRecorder *recorder = nullptr) {
    EngineOptions options;
    options.blockSize = 4;
    options.numBlocks = 128;
    options.maxBatch = maxBatch;
    options.maxStepTokens = maxStepTokens;
    options.ignoreEos = true;
    auto created = HostExecutor::create(*model->artifact, *model->weights,
                                        options.numBlocks, options.blockSize);
    EXPECT_TRUE(created.ok()) << created.status().message();
    executors.push_back(std::move(*created));
    Executor *stepper = executors.back().get();
    if (recorder) {
      recorder->inner = stepper;
      stepper = recorder;
    }
    auto e = Engine::create(*stepper,
                            model->artifact->manifest(), options);
    EXPECT_TRUE(e.ok()) << e.status().message();
    return std::move(*e);
  }

  Request request(const std::string &id, const std::string &prompt, int64_t n) {
    Request r;
    r.id = id;
    r.promptIds = model->prompts.at(prompt);
    r.maxNewTokens = n;
    return r;
  }

  std::vector<int32_t> alone(const Request &r) {
    auto results = engine(1)->run({r});
    EXPECT_TRUE(results.ok()) << results.status().message();
    return results.ok() ? results->front().generatedIds
                        : std::vector<int32_t>();
  }

  static void expectNoBlockInUse(const Engine &e) {
    const kv::KVCacheManager &cache = e.kvCache();
    for (int64_t g = 0; g < cache.numGroups(); ++g)
      EXPECT_EQ(cache.pool().numUsedBlocks(g), 0)
          << "group " << cache.groupSpec(g).name;
    EXPECT_EQ(cache.pool().numUsedBlocks(), 0);
  }

  std::unique_ptr<ReferenceModel> model;
  std::vector<std::unique_ptr<HostExecutor>> executors;
};

TEST_F(EngineStepTest, RequestsSubmittedWhileOthersRunEqualThemAlone) {
  Request a = request("a", "len40", 20), b = request("b", "len12", 12);
  auto e = engine(4);
  ASSERT_TRUE(e->submit(a).ok());
  std::map<std::string, std::vector<int32_t>> streamed, finished;
  RunCallbacks callbacks;
  callbacks.onToken = [&](const RequestResult &r, int32_t token) {
    streamed[r.id].push_back(token);
    EXPECT_EQ(r.generatedIds.back(), token);
  };
  callbacks.onFinish = [&](const RequestResult &r) {
    finished[r.id] = r.generatedIds;
  };
  for (int s = 0; s < 5; ++s)
    ASSERT_TRUE(e->step(callbacks).ok());
  ASSERT_TRUE(e->submit(b).ok()); // a is decoding
  while (e->hasWork())
    ASSERT_TRUE(e->step(callbacks).ok());
  EXPECT_EQ(finished["a"], alone(a));
  EXPECT_EQ(finished["b"], alone(b));
  EXPECT_EQ(streamed, finished);
  expectNoBlockInUse(*e);
}

TEST_F(EngineStepTest, StepTokenBudgetChunksPromptsBetweenDecodeTokens) {
  // b arrives while a decodes: its 100-token prompt is computed in chunks
  // of what the budget of 7 leaves after a's decode token, every step.
  Request a = request("a", "len12", 30), b = request("b", "len100", 6);
  StepRecorder recorder;
  auto e = engine(2, 7, &recorder);
  ASSERT_TRUE(e->submit(a).ok());
  std::map<std::string, std::vector<int32_t>> finished;
  RunCallbacks callbacks;
  callbacks.onFinish = [&](const RequestResult &r) {
    finished[r.id] = r.generatedIds;
  };
  for (int s = 0; s < 3; ++s) // a's prompt in two chunks, then a token
    ASSERT_TRUE(e->step(callbacks).ok());
  size_t submitted = recorder.steps.size();
  ASSERT_TRUE(e->submit(b).ok());
  while (e->hasWork())
    ASSERT_TRUE(e->step(callbacks).ok());
  for (const StepInput &step : recorder.steps)
    EXPECT_LE(step.ids.size(), 7u);
  // While b's prompt is computed (15 steps of 6 tokens and one of 10 - 6),
  // every step also decodes a token of a.
  for (size_t s = submitted; s < submitted + 15; ++s) {
    const StepInput &step = recorder.steps[s];
    EXPECT_EQ(step.ids.size(), 7u) << "step " << s;
    EXPECT_EQ(std::count(step.generated.begin(), step.generated.end(), 1), 1)
        << "step " << s;
  }
  EXPECT_EQ(finished["a"], alone(a));
  EXPECT_EQ(finished["b"], alone(b));
  expectNoBlockInUse(*e);
}

TEST_F(EngineStepTest, RefusesAStepTokenBudgetBelowTheBatch) {
  EngineOptions options;
  options.maxBatch = 4;
  options.maxStepTokens = 3;
  options.numBlocks = 16;
  auto executor =
      HostExecutor::create(*model->artifact, *model->weights, 16, 16);
  ASSERT_TRUE(executor.ok());
  auto e = Engine::create(**executor, model->artifact->manifest(), options);
  ASSERT_FALSE(e.ok());
  EXPECT_EQ(e.status().message(),
            "--max-num-batched-tokens must be at least --max-batch (4), found 3");
}

TEST_F(EngineStepTest, CancelledRequestsFreeTheirBlocksAndOthersGoOn) {
  Request a = request("a", "len100", 30), b = request("b", "len40", 16);
  Request waiting = request("w", "len12", 8);
  auto e = engine(2);
  StatusOr<Ticket> ta = e->submit(a), tb = e->submit(b),
                   tw = e->submit(waiting);
  ASSERT_TRUE(ta.ok() && tb.ok() && tw.ok());
  std::map<std::string, std::vector<int32_t>> finished;
  RunCallbacks callbacks;
  callbacks.onFinish = [&](const RequestResult &r) {
    finished[r.id] = r.generatedIds;
  };
  for (int s = 0; s < 4; ++s)
    ASSERT_TRUE(e->step(callbacks).ok());
  EXPECT_EQ(e->numRunning(), 2);
  EXPECT_EQ(e->numWaiting(), 1);
  ASSERT_TRUE(e->cancel(*ta).ok()); // running
  ASSERT_TRUE(e->cancel(*tw).ok()); // never admitted
  ASSERT_TRUE(e->cancel(*tw).ok()); // twice: no error
  while (e->hasWork())
    ASSERT_TRUE(e->step(callbacks).ok());
  EXPECT_EQ(finished.count("a") + finished.count("w"), 0u);
  EXPECT_EQ(finished["b"], alone(b));
  expectNoBlockInUse(*e);
}

TEST_F(EngineStepTest, LogprobsAreTheLogSoftmaxOfTheLogits) {
  Request r = request("r", "len12", 6);
  r.topLogprobs = 5;
  r.recordLogits = true;
  r.recordLogitsFrom = r.promptIds.size() - 1;
  auto results = engine(1)->run({r});
  ASSERT_TRUE(results.ok()) << results.status().message();
  const RequestResult &result = results->front();
  int64_t vocab = model->artifact->manifest().config.vocabSize;
  ASSERT_EQ(result.logprobs.size(), 6u);
  for (size_t t = 0; t < 6; ++t) {
    const float *row = result.logits.data() + t * vocab;
    double max = *std::max_element(row, row + vocab), sum = 0;
    for (int64_t i = 0; i < vocab; ++i)
      sum += std::exp((double)row[i] - max);
    double logZ = max + std::log(sum);
    const TokenLogprobs &lp = result.logprobs[t];
    EXPECT_NEAR(lp.logprob, row[result.generatedIds[t]] - logZ, 1e-5);
    ASSERT_EQ(lp.top.size(), 5u);
    EXPECT_EQ(lp.top[0].first, result.generatedIds[t]); // greedy
    for (size_t k = 0; k < 5; ++k) {
      EXPECT_NEAR(lp.top[k].second, row[lp.top[k].first] - logZ, 1e-5);
      if (k > 0)
        EXPECT_GE(lp.top[k - 1].second, lp.top[k].second);
    }
  }
  EXPECT_EQ(result.generatedIds, alone(request("r", "len12", 6)));
}

TEST_F(EngineStepTest, RefusesTooManyTopLogprobs) {
  Request r = request("r", "len12", 2);
  r.topLogprobs = kMaxTopLogprobs + 1;
  EXPECT_FALSE(engine(1)->submit(r).ok());
}

} // namespace
} // namespace cohere2c::test
