//===- FP8EndToEndTest.cpp - FP8 rowwise on the host against its reference ===//
//
// The host target emulates the FP8 rowwise recipe exactly in f32. Fed the
// reference's tokens (teacher forcing: prompt + greedy tokens as the
// prompt, test/data/models/README.md), its logits must be far closer to the
// float64 emulation of the recipe (logits_fp8) than that emulation is to
// full precision (logits): mean |ours - fp8| <= mean |fp8 - full| / 4, and
// never NaN. Closeness to full precision alone would not show that the
// recipe is computed.
//
//===----------------------------------------------------------------------===//

#include "ReferenceModel.h"
#include "host/HostExecutor.h"
#include "scheduler/Engine.h"

#include <gtest/gtest.h>

#include <cmath>

namespace cohere2c::test {
namespace {

class FP8EndToEndTest : public ::testing::TestWithParam<std::string> {};

TEST_P(FP8EndToEndTest, ComputesTheFP8RowwiseRecipe) {
  auto model = ReferenceModel::load(GetParam(), "fp8-rowwise");
  ASSERT_TRUE(model->artifact && model->weights);
  const Manifest &manifest = model->artifact->manifest();
  ASSERT_EQ(manifest.precision, "fp8-rowwise");
  int64_t vocab = manifest.config.vocabSize;
  EngineOptions options;
  options.blockSize = 16;
  options.numBlocks = 32;
  options.ignoreEos = true;
  auto executor = HostExecutor::create(*model->artifact, *model->weights,
                                       {options.numBlocks, options.numBlocks},
                                       options.blockSize);
  ASSERT_TRUE(executor.ok()) << executor.status().message();
  for (const auto &[name, prompt] : model->prompts) {
    SCOPED_TRACE(model->name + " " + name);
    auto engine = Engine::create(**executor, manifest, options);
    ASSERT_TRUE(engine.ok()) << engine.status().message();
    Request r = model->teacherForced(name);
    auto results = (*engine)->run({r});
    ASSERT_TRUE(results.ok()) << results.status().message();
    const std::vector<float> &ours = results->front().logits;

    int64_t rows = 0;
    std::vector<float> full = model->logits(name, rows, "logits");
    std::vector<float> fp8 = model->logits(name, rows, "logits_fp8");
    ASSERT_EQ((int64_t)ours.size(), rows * vocab);
    double oursToFp8 = 0, fp8ToFull = 0;
    int64_t nans = 0;
    for (size_t i = 0; i < fp8.size(); ++i) {
      nans += std::isnan(ours[i]);
      oursToFp8 += std::fabs(ours[i] - fp8[i]);
      fp8ToFull += std::fabs(fp8[i] - full[i]);
    }
    oursToFp8 /= fp8.size();
    fp8ToFull /= fp8.size();
    EXPECT_EQ(nans, 0);
    EXPECT_LE(oursToFp8, fp8ToFull / 4)
        << "mean |ours - logits_fp8| = " << oursToFp8
        << ", mean |logits_fp8 - logits| = " << fp8ToFull;
    RecordProperty(name + "_mean_abs_to_fp8", std::to_string(oursToFp8));
    RecordProperty(name + "_mean_abs_fp8_to_full", std::to_string(fp8ToFull));
  }
}

INSTANTIATE_TEST_SUITE_P(AllModels, FP8EndToEndTest,
                         ::testing::ValuesIn(referenceModelNames()),
                         [](const ::testing::TestParamInfo<std::string> &info) {
                           return testName(info.param);
                         });

} // namespace
} // namespace cohere2c::test
