//===- KernelSpecTest.cpp - Kernel families and their arguments ------------===//

#include "Artifact/KernelSpec.h"

#include <gtest/gtest.h>

#include <set>
#include <string>

namespace cohere2c {
namespace {

// Every family and rows value has one name, which names it back (the
// manifest and the plan's text both go through these tables).
TEST(KernelSpecTest, NamesRoundTrip) {
  std::set<std::string> seen;
  for (int f = 0; f <= (int)KernelFamily::GemvFP8; ++f) {
    std::string_view name = kernelFamilyName((KernelFamily)f);
    ASSERT_FALSE(name.empty()) << f;
    EXPECT_TRUE(seen.insert(std::string(name)).second) << name;
    EXPECT_EQ(kernelFamilyNamed(name), (KernelFamily)f) << name;
  }
  EXPECT_EQ(kernelFamilyName(KernelFamily::LayerNormQuantFP8), "layer_norm_quant_fp8");
  EXPECT_EQ(kernelFamilyNamed("softmax"), std::nullopt);
  for (KernelRows r : {KernelRows::All, KernelRows::Generated, KernelRows::Prompt})
    EXPECT_EQ(kernelRowsNamed(kernelRowsName(r)), r);
}

// What a family reads with a compiled row stride and what it writes, by
// argument, as the kernels' argument lists (KernelSpec.h) say.
TEST(KernelSpecTest, ArgumentsOfEachFamily) {
  KernelSpec append{KernelFamily::KVAppend};
  EXPECT_EQ(rowStrideArguments(append), (std::vector<int>{0, 1}));
  EXPECT_EQ(outputArguments(append, 9), (std::vector<int>{5}));
  append.rope = true; // also q (argument 9), rotated into q_rotated (10)
  EXPECT_EQ(rowStrideArguments(append), (std::vector<int>{0, 1, 9}));
  EXPECT_EQ(outputArguments(append, 11), (std::vector<int>{5, 10}));
  EXPECT_EQ(outputArguments({KernelFamily::AttentionPrefill}, 13), (std::vector<int>{5, 11}));
  EXPECT_EQ(outputArguments({KernelFamily::ResidualSum}, 4), (std::vector<int>{3}));
  EXPECT_EQ(outputArguments({KernelFamily::SwiGLUQuantFP8}, 4), (std::vector<int>{2, 3}));
  EXPECT_EQ(rowStrideArguments({KernelFamily::SwiGLU}), (std::vector<int>{0, 1}));
  EXPECT_TRUE(rowStrideArguments({KernelFamily::Embedding}).empty());
}

} // namespace
} // namespace cohere2c
