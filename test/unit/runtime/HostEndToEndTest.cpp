//===- HostEndToEndTest.cpp - Compiled models against the float64 oracle --===//
//
// Every shipped model (the random ones and the trained one), every prompt of
// its reference, greedy with EOS ignored: the greedy tokens (24; 32 for the
// trained model) equal the reference's and every logits row
// (prompt and decode alike) is within 1e-4 of the float64 logits, whole
// prompt at once and in chunks of 1, 3 and 7 tokens (ragged chunks across
// window and block boundaries).
//
//===----------------------------------------------------------------------===//

#include "ReferenceModel.h"
#include "host/HostExecutor.h"
#include "scheduler/Engine.h"

#include <gtest/gtest.h>

#include <cmath>

namespace cohere2c::test {
namespace {

struct Case {
  std::string model;
  int64_t prefillChunk;
};

void PrintTo(const Case &c, std::ostream *os) {
  *os << c.model << " prefill chunk " << c.prefillChunk;
}

class HostEndToEndTest : public ::testing::TestWithParam<Case> {};

TEST_P(HostEndToEndTest, MatchesFloat64Reference) {
  auto model = ReferenceModel::load(GetParam().model);
  ASSERT_TRUE(model->artifact && model->weights);
  const Manifest &manifest = model->artifact->manifest();
  int64_t vocab = manifest.config.vocabSize;
  EngineOptions options;
  options.blockSize = 4;
  // The longest case (231 positions) whole in each of the 4 KV groups.
  options.numBlocks = 256;
  options.prefillChunk = GetParam().prefillChunk;
  options.ignoreEos = true;
  auto executor = HostExecutor::create(*model->artifact, *model->weights,
                                       options.numBlocks, options.blockSize);
  ASSERT_TRUE(executor.ok()) << executor.status().message();

  for (const auto &[name, prompt] : model->prompts) {
    SCOPED_TRACE(model->name + " " + name);
    auto engine = Engine::create(**executor, manifest, options);
    ASSERT_TRUE(engine.ok()) << engine.status().message();
    Request r;
    r.id = name;
    r.promptIds = prompt;
    r.maxNewTokens = model->greedy[name].size();
    r.recordLogits = true;
    auto results = (*engine)->run({r});
    ASSERT_TRUE(results.ok()) << results.status().message();
    const RequestResult &result = results->front();
    EXPECT_EQ(result.generatedIds, model->greedy[name]);

    int64_t rows = 0;
    std::vector<float> reference = model->logits(name, rows);
    ASSERT_EQ(result.firstLogitsRow, 0);
    ASSERT_EQ((int64_t)result.logits.size(), rows * vocab);
    double maxDiff = 0;
    for (size_t i = 0; i < reference.size(); ++i)
      maxDiff =
          std::max(maxDiff, (double)std::fabs(result.logits[i] - reference[i]));
    EXPECT_LT(maxDiff, 1e-4) << "max |logits - reference|";
    RecordProperty(name + "_max_abs_diff", std::to_string(maxDiff));
  }
}

std::vector<Case> cases() {
  std::vector<Case> all;
  for (const std::string &model : referenceModelNames())
    for (int64_t chunk : {0, 1, 3, 7})
      all.push_back({model, chunk});
  // Its prompts are longer (one of 200 tokens, past its window of 128).
  for (int64_t chunk : {0, 7})
    all.push_back({"trained-cohere2", chunk});
  return all;
}

INSTANTIATE_TEST_SUITE_P(AllModels, HostEndToEndTest,
                         ::testing::ValuesIn(cases()),
                         [](const ::testing::TestParamInfo<Case> &info) {
                           return testName(
                               info.param.model + "_chunk" +
                               std::to_string(info.param.prefillChunk));
                         });

} // namespace
} // namespace cohere2c::test
