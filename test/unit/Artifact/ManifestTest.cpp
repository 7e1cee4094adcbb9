//===- ManifestTest.cpp - Tests for the artifact manifest -----------------===//
//
// Expected sizes are worked out by hand from the pool layout of Manifest.h,
// [blocks][layers of the group][K, V][block size][KV heads][head_dim], and
// the shipped configs (test/data/models/README.md).
//
//===----------------------------------------------------------------------===//
#include "Artifact/Manifest.h"

#include <gtest/gtest.h>

using namespace cohere2c;

namespace {

Manifest manifestFor(const std::string &config, const std::string &precision,
                     const std::string &target = "host") {
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

TEST(ManifestTest, KVBytesPerBlockOfTinyModel) {
  // 8 layers (S S S F S S S F), 2 KV heads of 32, f32.
  Manifest m = manifestFor("models/tiny-cohere2/config.json", "f32");
  EXPECT_EQ(kvBytesPerBlock(m, kFullGroup, 16), 2 * 2 * 16 * 2 * 32 * 4);
  EXPECT_EQ(kvBytesPerBlock(m, kSlidingGroup, 16), 6 * 2 * 16 * 2 * 32 * 4);
  EXPECT_EQ(kvBytesPerBlock(m, kFullGroup, 1), 2 * 2 * 1 * 2 * 32 * 4);
}

TEST(ManifestTest, KVBytesPerBlockFollowsPrecision) {
  // Command R7B: 8 full and 24 sliding layers, 8 KV heads of 128, bf16 on
  // cuda (in bf16 and fp8-rowwise alike: FP8 is for the linear weights).
  for (const char *precision : {"bf16", "fp8-rowwise"}) {
    Manifest m = manifestFor("configs/command-r7b.config.json", precision, "cuda");
    EXPECT_EQ(kvBytesPerBlock(m, kFullGroup, 16), 8 * 2 * 16 * 8 * 128 * 2);
    EXPECT_EQ(kvBytesPerBlock(m, kSlidingGroup, 16), 24 * 2 * 16 * 8 * 128 * 2);
  }
  // The host keeps its KV cache in f32 for fp8-rowwise.
  Manifest host = manifestFor("configs/command-r7b.config.json", "fp8-rowwise");
  EXPECT_EQ(kvBytesPerBlock(host, kFullGroup, 16), 8 * 2 * 16 * 8 * 128 * 4);
}

TEST(ManifestTest, KVBytesPerBlockOfEmptyGroupIsZero) {
  Manifest m = manifestFor("models/tiny-cohere2/config.json", "f32");
  m.config.layerKinds.assign(m.config.numLayers, LayerKind::Sliding);
  m.kvGroups = kvGroupsFor(m.config);
  EXPECT_EQ(kvBytesPerBlock(m, kFullGroup, 16), 0);
  EXPECT_EQ(kvBytesPerBlock(m, kSlidingGroup, 16), 8 * 2 * 16 * 2 * 32 * 4);
}

TEST(ManifestTest, WeightsIdRoundTrips) {
  Manifest m = manifestFor("models/tiny-cohere2/config.json", "f32");
  m.weights = WeightLayout::forModel(m.config, DType::F32);
  for (const std::string &id : {std::string("00112233445566778899aabbccddeeff"),
                                std::string()}) {
    m.weightsId = id;
    StatusOr<Manifest> parsed = Manifest::parse(m.toJson(), "tiny.so");
    ASSERT_TRUE(parsed.ok()) << parsed.status().message();
    EXPECT_EQ(parsed->weightsId, id);
  }
}

TEST(ManifestTest, RejectsBadWeightsId) {
  Manifest m = manifestFor("models/tiny-cohere2/config.json", "f32");
  m.weights = WeightLayout::forModel(m.config, DType::F32);
  m.weightsId = "not-an-id";
  StatusOr<Manifest> parsed = Manifest::parse(m.toJson(), "tiny.so");
  ASSERT_FALSE(parsed.ok());
  EXPECT_EQ(parsed.status().message(), "tiny.so: manifest weights_id must be "
                                       "empty or 32 lowercase hex digits");
}

TEST(ManifestTest, RejectsFormatVersion2) {
  // Version 2 laid the weights out in another order (o before gate and up).
  Manifest m = manifestFor("models/tiny-cohere2/config.json", "f32");
  m.weights = WeightLayout::forModel(m.config, DType::F32);
  std::string text = m.toJson();
  size_t at = text.find("\"format_version\":3");
  ASSERT_NE(at, std::string::npos) << text;
  text.replace(at, 18, "\"format_version\":2");
  StatusOr<Manifest> parsed = Manifest::parse(text, "old.so");
  ASSERT_FALSE(parsed.ok());
  EXPECT_EQ(parsed.status().message(),
            "old.so: manifest format_version must be 3 (compiled by another "
            "version of cohere2c-compile: compile the model again)");
}

} // namespace
