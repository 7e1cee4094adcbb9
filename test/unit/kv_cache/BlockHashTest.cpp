//===- BlockHashTest.cpp - Tests of the chained block hash ----------------===//
#include "kv_cache/BlockHash.h"

#include <gtest/gtest.h>

#include <vector>

using namespace cohere2c::kv;

namespace {

TEST(BlockHashTest, DependsOnParentAndEveryToken) {
  std::vector<int32_t> tokens = {1, 2, 3, 4};
  BlockHash h = hashBlock(kRootBlockHash, tokens.data(), 4);
  EXPECT_EQ(h, hashBlock(kRootBlockHash, tokens.data(), 4));
  EXPECT_NE(h, hashBlock(h, tokens.data(), 4));
  for (int i = 0; i < 4; ++i) {
    std::vector<int32_t> changed = tokens;
    ++changed[i];
    EXPECT_NE(h, hashBlock(kRootBlockHash, changed.data(), 4)) << i;
  }
  EXPECT_NE(h, hashBlock(kRootBlockHash, tokens.data(), 3));
}

} // namespace
