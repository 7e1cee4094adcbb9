//===- EngineTest.cpp - Tests for the engine's sizing and admission -------===//
//
// Expected block counts are worked out by hand from the configs
// (test/data/models/README.md, test/data/configs) and the pool layout of
// Manifest.h.
//
//===----------------------------------------------------------------------===//

#include "scheduler/Engine.h"

#include <gtest/gtest.h>

namespace cohere2c {
namespace {

Manifest manifestFor(const std::string &config, const std::string &target,
                     const std::string &precision) {
  StatusOr<ModelConfig> parsed = ModelConfig::fromFile(
      std::string(COHERE2C_TEST_DATA_DIR) + "/" + config);
  EXPECT_TRUE(parsed.ok()) << parsed.status().message();
  Manifest m;
  m.config = *parsed;
  m.target = target;
  m.precision = precision;
  m.kvGroups = kvGroupsFor(m.config);
  return m;
}

EngineOptions withBatch(int64_t maxBatch) {
  EngineOptions options;
  options.blockSize = 16;
  options.maxBatch = maxBatch;
  return options;
}

TEST(EngineTest, DefaultKVBlocksHoldMaxBatchFullContexts) {
  // Context 8192 = 512 blocks of 16, + 1.
  Manifest tiny = manifestFor("models/tiny-cohere2/config.json", "host", "f32");
  EXPECT_EQ(defaultKVBlocks(tiny, withBatch(1)), 513);
  EXPECT_EQ(defaultKVBlocks(tiny, withBatch(8)), 8 * 513);
}

TEST(EngineTest, DefaultKVBlocksOfHostTargetTakeAtMost4GiB) {
  // tiny-cohere2: 8 layers x 2 x 16 x 2 x 32 x 4 bytes = 64 KiB per block
  // over both groups, so 4 GiB hold 65536 blocks (fewer than 128 x 513).
  Manifest tiny = manifestFor("models/tiny-cohere2/config.json", "host", "f32");
  EXPECT_EQ(defaultKVBlocks(tiny, withBatch(128)), 65536);
  EXPECT_EQ(defaultKVBlocks(tiny, withBatch(65536)), 65536);
  // Command A: 64 layers x 2 x 16 x 8 x 128 x 4 bytes = 8 MiB per block, so
  // 512 blocks, not even one context of 131072 tokens (8193 blocks).
  Manifest commandA =
      manifestFor("configs/command-a.config.json", "host", "f32");
  EXPECT_EQ(defaultKVBlocks(commandA, withBatch(1)), 512);
}

TEST(EngineTest, DefaultKVBlocksOfCudaTargetAreNotCapped) {
  Manifest r7b = manifestFor("configs/command-r7b.config.json", "cuda", "bf16");
  EXPECT_EQ(defaultKVBlocks(r7b, withBatch(64)), 64 * 513);
}

} // namespace
} // namespace cohere2c
