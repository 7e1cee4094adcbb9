//===- EngineTest.cpp - Tests for the engine's sizing and admission -------===//
//
// Expected block counts are worked out by hand from the configs
// (test/data/models/README.md, test/data/configs) and the pool layout of
// Manifest.h.
//
//===----------------------------------------------------------------------===//

#include "scheduler/Engine.h"

#include <gtest/gtest.h>

#include <cmath>

namespace cohere2c {
namespace {

Manifest manifestFor(const std::string &config, const std::string &target,
                     const std::string &precision) {
  StatusOr<ModelConfig> parsed =
      ModelConfig::fromFile(std::string(COHERE2C_TEST_DATA_DIR) + "/" + config);
  EXPECT_TRUE(parsed.ok()) << parsed.status().message();
  return Manifest::ofConfig(*parsed, target, precision);
}

EngineOptions withBatch(int64_t maxBatch) {
  EngineOptions options;
  options.blockSize = 16;
  options.maxBatch = maxBatch;
  return options;
}

TEST(EngineTest, DefaultKVBlocksHoldMaxBatchFullContexts) {
  // tiny-cohere2: 2 full and 6 sliding layers (window 8) in 4 groups of 2.
  // Context 8192 = 512 blocks of 16, prefilled at once (the default step
  // budget is 8192 tokens): every group holds all 512.
  Manifest tiny = manifestFor("models/tiny-cohere2/config.json", "host", "f32");
  EXPECT_EQ(defaultKVBlocks(tiny, withBatch(1)), 4 * 512);
  EXPECT_EQ(defaultKVBlocks(tiny, withBatch(8)), 8 * 4 * 512);
  // In prefill chunks of 64, a sliding group holds ceil((8 + 64) / 16) + 2.
  EngineOptions chunked = withBatch(8);
  chunked.prefillChunk = 64;
  EXPECT_EQ(defaultKVBlocks(tiny, chunked), 8 * (512 + 3 * 7));
}

TEST(EngineTest, DefaultKVBlocksOfHostTargetTakeAtMost4GiB) {
  // tiny-cohere2: 2 layers x 2 x 16 x 2 x 32 x 4 bytes = 16 KiB per block,
  // so 4 GiB hold 262144 blocks (fewer than 256 x 2048).
  Manifest tiny = manifestFor("models/tiny-cohere2/config.json", "host", "f32");
  EXPECT_EQ(defaultKVBlocks(tiny, withBatch(64)), 64 * 2048);
  EXPECT_EQ(defaultKVBlocks(tiny, withBatch(256)), 262144);
  EXPECT_EQ(defaultKVBlocks(tiny, withBatch(65536)), 262144);
  // Command A: 16 full and 48 sliding layers in 4 groups of 16: 16 x 2 x 16
  // x 8 x 128 x 4 bytes = 2 MiB per block, so 2048 blocks, short of one
  // context of 131072 tokens: 8192 full blocks + 3 x (ceil((4096 + 8192) /
  // 16) + 2) sliding ones.
  Manifest commandA =
      manifestFor("configs/command-a.config.json", "host", "f32");
  ASSERT_EQ(commandA.kvGroups.size(), 4u);
  EXPECT_EQ(kvBlocksHeld(commandA.kvGroups[1], 131072, 8192, 16), 770);
  EXPECT_EQ(defaultKVBlocks(commandA, withBatch(1)), 2048);
}

TEST(EngineTest, KVCapacityTextCountsWholeContexts) {
  // Command R7B: 4 groups of 8 layers; a context of 8192 tokens prefilled at
  // once holds all 512 blocks of 16 in every group: 2048, 7 in 15,520.
  EngineOptions options;
  options.numBlocks = 15520;
  Manifest r7b = manifestFor("configs/command-r7b.config.json", "cuda", "bf16");
  EXPECT_EQ(kvCapacityText(r7b, options),
            "15,520 blocks of 16 tokens x 8 layers shared by 4 KV groups "
            "(62,080 tokens in every group; whole 8,192-token contexts at "
            "once: 7)");
  // Command A: 131,072 tokens in steps of 8192 take 8192 full blocks and 770
  // in each sliding group: 10,502.
  Manifest commandA =
      manifestFor("configs/command-a.config.json", "cuda", "fp8-rowwise");
  EXPECT_EQ(kvBlocksPerContext(commandA, options), 10502);
  EXPECT_EQ(kvCapacityText(commandA, options),
            "15,520 blocks of 16 tokens x 16 layers shared by 4 KV groups "
            "(62,080 tokens in every group; whole 131,072-token contexts at "
            "once: 1)");
}

TEST(EngineTest, DefaultKVBlocksOfCudaTargetAreNotCapped) {
  Manifest r7b = manifestFor("configs/command-r7b.config.json", "cuda", "bf16");
  EXPECT_EQ(defaultKVBlocks(r7b, withBatch(64)), 64 * 4 * 512);
}

/// Engine::validate needs no step: an executor that is never run, with a
/// pool of 1-byte blocks.
class NoStepExecutor : public Executor {
public:
  Status run(const StepInput &, StepOutput &) override {
    return Status::error("not expected to run");
  }
  int64_t bytesPerBlock() const override { return 1; }
};

/// Validates `prompt` prompt tokens + `newTokens` on tiny-cohere2 (window 8;
/// `allSliding`: every layer sliding) with `options`.
std::string validate(int64_t prompt, int64_t newTokens, EngineOptions options,
                     bool allSliding = false, double temperature = 0.0) {
  Manifest m = manifestFor("models/tiny-cohere2/config.json", "host", "f32");
  if (allSliding) {
    m.config.layerKinds.assign(m.config.numLayers, LayerKind::Sliding);
    m.kvGroups = kvGroupsFor(m.config);
  }
  NoStepExecutor executor;
  StatusOr<std::unique_ptr<Engine>> engine =
      Engine::create(executor, m, options);
  EXPECT_TRUE(engine.ok()) << engine.status().message();
  Request r;
  r.id = "r";
  r.promptIds.assign(prompt, 5);
  r.maxNewTokens = newTokens;
  r.sampling.temperature = temperature;
  Status s = (*engine)->validate(r);
  return s.ok() ? "" : s.message();
}

TEST(EngineTest, ValidateRefusesRequestsTooLongForThePool) {
  EngineOptions options;
  options.blockSize = 16;
  options.numBlocks = 8;
  // 20 + 13 - 1 = 32 positions: exactly 2 blocks in each of the 4 groups
  // (the last sampled token's KV is never computed).
  EXPECT_EQ(validate(20, 13, options), "");
  EXPECT_EQ(validate(20, 14, options),
            "request r: needs up to 12 KV blocks of 16 tokens for its 33 "
            "positions (prompt + max_new_tokens - 1) computing up to 20 "
            "positions a step (full 3, "
            "sliding8.0 3, sliding8.1 3, sliding8.2 3), but the KV cache has 8 "
            "(--kv-blocks)");
}

TEST(EngineTest, ValidateCountsSlidingGroupsByTheirWindow) {
  // 40 + 61 - 1 = 100 positions in prefill chunks of 4 with blocks of 4: 25
  // blocks in the full group, ceil((8 + 4) / 4) + 2 = 5 in each sliding one.
  EngineOptions options;
  options.blockSize = 4;
  options.prefillChunk = 4;
  options.numBlocks = 40;
  EXPECT_EQ(validate(40, 61, options), "");
  options.numBlocks = 39;
  EXPECT_EQ(
      validate(40, 61, options),
      "request r: needs up to 40 KV blocks of 4 tokens for its 100 "
      "positions (prompt + max_new_tokens - 1) computing up to 4 positions a "
      "step (full 25, "
      "sliding8.0 5, sliding8.1 5, sliding8.2 5), but the KV cache has 39 "
      "(--kv-blocks)");
}

// Command A fp8-rowwise on one H200 leaves about 15 GiB for the KV cache:
// 15,520 blocks of 16 tokens x 16 layers (1 MiB each). Its whole context of
// 131,072 positions, prefilled in steps of 8192 tokens, takes 8192 blocks
// in the full group and ceil((4096 + 8192) / 16) + 2 = 770 in each of the
// three sliding groups: 10,502. With a pool per group, each of 15,520 / 4
// blocks, the full group's 8192 would not fit.
TEST(EngineTest, CommandAServesItsWholeContextFromTheSharedPool) {
  Manifest m = manifestFor("configs/command-a.config.json", "cuda", "fp8-rowwise");
  NoStepExecutor executor;
  EngineOptions options;
  options.numBlocks = 15520;
  StatusOr<std::unique_ptr<Engine>> engine = Engine::create(executor, m, options);
  ASSERT_TRUE(engine.ok()) << engine.status().message();
  Request r;
  r.id = "whole-context";
  r.promptIds.assign(131071, 5);
  r.maxNewTokens = 2;
  Status fits = (*engine)->validate(r);
  EXPECT_TRUE(fits.ok()) << fits.message();
  options.numBlocks = 10501;
  engine = Engine::create(executor, m, options);
  ASSERT_TRUE(engine.ok()) << engine.status().message();
  EXPECT_EQ(
      (*engine)->validate(r).message(),
      "request whole-context: needs up to 10502 KV blocks of 16 tokens "
      "for its 131072 positions (prompt + max_new_tokens - 1) computing up "
      "to 8192 positions a step (full 8192, sliding4096.0 770, sliding4096.1 "
      "770, "
      "sliding4096.2 770), but the KV cache has 10501 (--kv-blocks)");
}

// A temperature outside [0, 10000] (NaN, infinite, or one whose f32 the
// device could not take) is refused, never sampled from.
TEST(EngineTest, ValidateBoundsTheTemperature) {
  EngineOptions options;
  options.blockSize = 16;
  EXPECT_EQ(validate(3, 4, options, false, 10000.0), "");
  EXPECT_EQ(validate(3, 4, options, false, 20000.0),
            "request r: temperature must be in [0, 10000], found 20000.000000");
  for (double bad : {1e39, -1.0, std::nan(""), (double)INFINITY})
    EXPECT_NE(validate(3, 4, options, false, bad)
                  .find("temperature must be in [0, 10000]"),
              std::string::npos)
        << bad;
}

TEST(EngineTest, ValidateBoundsPositionsByTheContext) {
  // tiny-cohere2's context is 8192 positions; a request uses P + N - 1.
  EngineOptions options;
  options.blockSize = 16;
  EXPECT_EQ(validate(3, 8190, options), "");
  EXPECT_EQ(validate(8192, 1, options), "");
  EXPECT_EQ(validate(3, 8191, options),
            "request r: prompt (3 tokens) + max_new_tokens (8191) - 1 exceeds "
            "the context of 8192 tokens (max_position_embeddings)");
}

TEST(EngineTest, ValidateBoundsSlidingGroupByWindowAndChunk) {
  // Only sliding layers (window 8), blocks of 4: a 40-token prompt computed
  // at once holds at most ceil((8 + 40) / 4) + 2 = 14 blocks.
  EngineOptions options;
  options.blockSize = 4;
  options.numBlocks = 14;
  EXPECT_EQ(validate(40, 60, options, /*allSliding=*/true), "");
  options.numBlocks = 13;
  EXPECT_EQ(validate(40, 60, options, /*allSliding=*/true),
            "request r: needs up to 14 KV blocks of 4 tokens for its 99 "
            "positions (prompt + max_new_tokens - 1) computing up to 40 "
            "positions a step "
            "(sliding8 14), but the KV cache has 13 (--kv-blocks)");
  // Prefill chunks of 4: ceil((8 + 4) / 4) + 2 = 5 blocks.
  options.prefillChunk = 4;
  options.numBlocks = 5;
  EXPECT_EQ(validate(40, 60, options, /*allSliding=*/true), "");
  options.numBlocks = 4;
  EXPECT_EQ(validate(40, 60, options, /*allSliding=*/true),
            "request r: needs up to 5 KV blocks of 4 tokens for its 99 "
            "positions (prompt + max_new_tokens - 1) computing up to 4 "
            "positions a step (sliding8 "
            "5), but the KV cache has 4 (--kv-blocks)");
  // A short request needs no more than its own positions: 3 + 2 - 1 = 4.
  options.numBlocks = 1;
  EXPECT_EQ(validate(3, 2, options, /*allSliding=*/true), "");
}

/// Logits that went NaN from the second step on (as a corrupted weights
/// file or an overflow at run time makes them).
class NaNLogitsExecutor : public Executor {
public:
  Status run(const StepInput &in, StepOutput &output) override {
    output.logits.assign(in.logitRows.size() * 512, steps_++ ? std::nanf("") : 1.0f);
    sampledTokensOnHost(in, 512, output);
    return Status::success();
  }
  int64_t bytesPerBlock() const override { return 1; }

private:
  int steps_ = 0;
};

TEST(EngineTest, NonFiniteLogitsStopTheRequestWithAnError) {
  Manifest m = manifestFor("models/tiny-cohere2/config.json", "host", "f32");
  NaNLogitsExecutor executor;
  EngineOptions options = withBatch(1);
  options.numBlocks = 8;
  options.ignoreEos = true;
  auto engine = Engine::create(executor, m, options);
  ASSERT_TRUE(engine.ok()) << engine.status().message();
  Request r;
  r.id = "r";
  r.promptIds = {5, 6, 7};
  r.maxNewTokens = 4;
  auto results = (*engine)->run({r});
  ASSERT_FALSE(results.ok()) << "generated from NaN logits";
  EXPECT_EQ(results.status().message(),
            "request r: the logits of position 3 are not finite (NaN or infinite): the "
            "weights or the computation overflowed, and no token can be sampled");
}

} // namespace
} // namespace cohere2c
