//===- SafeTensorsTest.cpp - Tests for the safetensors reader -------------===//
//
// Files are written byte by byte here; expected element values are worked out
// by hand from the IEEE / OCP FP8 encodings.
//
//===----------------------------------------------------------------------===//
#include "Model/SafeTensors.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <set>
#include <unistd.h>

using namespace cohere2c;
using nlohmann::json;

namespace {

using Bytes = std::vector<uint8_t>;

/// This process's folder of test files (its pid in the name, so that two
/// checkouts' tests never share one), removed when the process exits.
const std::string &scratchRoot() {
  static const struct Root {
    std::string path = ::testing::TempDir() + "/cohere2c-safetensors-" +
                       std::to_string(::getpid());
    ~Root() { std::filesystem::remove_all(path); }
  } root;
  return root.path;
}

/// A fresh, empty folder named after the running test.
std::string freshDir() {
  std::string dir =
      scratchRoot() + "/" +
      ::testing::UnitTest::GetInstance()->current_test_info()->name();
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  return dir;
}

/// Writes the 8-byte little-endian header length, the header, the data.
void writeSafeTensors(const std::string &path, const std::string &header,
                      const Bytes &data) {
  std::ofstream out(path, std::ios::binary);
  uint64_t length = header.size();
  for (int i = 0; i < 8; ++i)
    out.put(char((length >> (8 * i)) & 0xFF));
  out << header;
  out.write(reinterpret_cast<const char *>(data.data()), data.size());
}

Bytes le16(std::initializer_list<uint16_t> values) {
  Bytes bytes;
  for (uint16_t v : values) {
    bytes.push_back(v & 0xFF);
    bytes.push_back(v >> 8);
  }
  return bytes;
}

/// Opens a one-tensor file "x" with the given dtype, shape and data.
std::shared_ptr<SafeTensorsFile> openOne(const std::string &dtype,
                                         std::vector<int64_t> shape,
                                         const Bytes &data) {
  std::string path = freshDir() + "/x.safetensors";
  json header = {{"__metadata__", {{"format", "pt"}}},
                 {"x",
                  {{"dtype", dtype},
                   {"shape", shape},
                   {"data_offsets", {0, data.size()}}}}};
  writeSafeTensors(path, header.dump(), data);
  StatusOr<std::shared_ptr<SafeTensorsFile>> file = SafeTensorsFile::open(path);
  EXPECT_TRUE(file.ok()) << file.status().message();
  return file.ok() ? *file : nullptr;
}

/// The error message of opening a file with this header and data.
std::string openError(const std::string &path, const std::string &header,
                      const Bytes &data) {
  writeSafeTensors(path, header, data);
  StatusOr<std::shared_ptr<SafeTensorsFile>> file = SafeTensorsFile::open(path);
  return file.ok() ? "" : file.status().message();
}

TEST(SafeTensorsTest, DTypeNamesAndSizes) {
  EXPECT_STREQ(dtypeName(DType::F32), "F32");
  EXPECT_STREQ(dtypeName(DType::BF16), "BF16");
  EXPECT_STREQ(dtypeName(DType::F16), "F16");
  EXPECT_STREQ(dtypeName(DType::F8E4M3), "F8_E4M3");
  EXPECT_EQ(dtypeSize(DType::F32), 4u);
  EXPECT_EQ(dtypeSize(DType::BF16), 2u);
  EXPECT_EQ(dtypeSize(DType::F16), 2u);
  EXPECT_EQ(dtypeSize(DType::F8E4M3), 1u);
}

TEST(SafeTensorsTest, ScaleNamesAndTheirWeights) {
  EXPECT_EQ(scaleNameOf("model.layers.0.mlp.up_proj.weight"),
            "model.layers.0.mlp.up_proj.weight_scale");
  EXPECT_EQ(weightNameOfScale("model.layers.0.mlp.up_proj.weight_scale"),
            "model.layers.0.mlp.up_proj.weight");
  EXPECT_EQ(weightNameOfScale("model.layers.0.mlp.up_proj.weight"), "");
  EXPECT_EQ(weightNameOfScale("_scale"), ""); // scales no tensor
}

TEST(SafeTensorsTest, ReadsF32) {
  // 1.0f = 0x3F800000, -2.5f = 0xC0200000, little-endian.
  auto file =
      openOne("F32", {1, 2}, {0x00, 0x00, 0x80, 0x3F, 0x00, 0x00, 0x20, 0xC0});
  ASSERT_TRUE(file);
  ASSERT_EQ(file->tensors().size(), 1u); // __metadata__ is not a tensor.
  const TensorView &x = file->tensors().at("x");
  EXPECT_EQ(x.name, "x");
  EXPECT_EQ(x.dtype, DType::F32);
  EXPECT_EQ(x.shape, (std::vector<int64_t>{1, 2}));
  EXPECT_EQ(x.numElements(), 2);
  EXPECT_EQ(x.numBytes, 8u);
  EXPECT_EQ(x.at(0), 1.0f);
  EXPECT_EQ(x.at(1), -2.5f);
}

TEST(SafeTensorsTest, ReadsBF16) {
  auto file =
      openOne("BF16", {5}, le16({0x3F80, 0xC000, 0x4049, 0x7F80, 0x0001}));
  ASSERT_TRUE(file);
  const TensorView &x = file->tensors().at("x");
  EXPECT_EQ(x.at(0), 1.0f);
  EXPECT_EQ(x.at(1), -2.0f);
  EXPECT_EQ(x.at(2), 3.140625f); // 0x40490000
  EXPECT_EQ(x.at(3), INFINITY);
  EXPECT_EQ(x.at(4), std::ldexp(1.0f, -133)); // f32 subnormal 0x00010000
}

TEST(SafeTensorsTest, ReadsF16) {
  auto file = openOne("F16", {10},
                      le16({0x3C00, 0xC000, 0x3555, 0x0001, 0x03FF, 0x0400,
                            0x7BFF, 0xFC00, 0x7E00, 0x8000}));
  ASSERT_TRUE(file);
  const TensorView &x = file->tensors().at("x");
  EXPECT_EQ(x.at(0), 1.0f);
  EXPECT_EQ(x.at(1), -2.0f);
  EXPECT_EQ(x.at(2), 0.333251953125f);          // 1365 / 4096
  EXPECT_EQ(x.at(3), std::ldexp(1.0f, -24));    // smallest subnormal
  EXPECT_EQ(x.at(4), std::ldexp(1023.0f, -24)); // largest subnormal
  EXPECT_EQ(x.at(5), std::ldexp(1.0f, -14));    // smallest normal
  EXPECT_EQ(x.at(6), 65504.0f);                 // largest finite
  EXPECT_EQ(x.at(7), -INFINITY);
  EXPECT_TRUE(std::isnan(x.at(8)));
  EXPECT_EQ(x.at(9), 0.0f);
  EXPECT_TRUE(std::signbit(x.at(9)));
}

TEST(SafeTensorsTest, ReadsF8E4M3) {
  auto file = openOne(
      "F8_E4M3", {2, 6},
      {0x38, 0xB8, 0x3C, 0x7E, 0xFE, 0x7D, 0x01, 0x07, 0x08, 0x7F, 0xFF, 0x80});
  ASSERT_TRUE(file);
  const TensorView &x = file->tensors().at("x");
  EXPECT_EQ(x.numBytes, 12u);
  EXPECT_EQ(x.at(0), 1.0f); // exponent 7 = bias
  EXPECT_EQ(x.at(1), -1.0f);
  EXPECT_EQ(x.at(2), 1.5f);
  EXPECT_EQ(x.at(3), 448.0f); // max finite, 1.75 x 2^8
  EXPECT_EQ(x.at(4), -448.0f);
  EXPECT_EQ(x.at(5), 416.0f);               // 1.625 x 2^8
  EXPECT_EQ(x.at(6), std::ldexp(1.0f, -9)); // smallest subnormal
  EXPECT_EQ(x.at(7), std::ldexp(7.0f, -9)); // largest subnormal
  EXPECT_EQ(x.at(8), std::ldexp(1.0f, -6)); // smallest normal
  EXPECT_TRUE(std::isnan(x.at(9)));
  EXPECT_TRUE(std::isnan(x.at(10)));
  EXPECT_EQ(x.at(11), 0.0f);
  EXPECT_TRUE(std::signbit(x.at(11)));
}

TEST(SafeTensorsTest, RejectsMissingFile) {
  std::string path = freshDir() + "/absent.safetensors";
  StatusOr<std::shared_ptr<SafeTensorsFile>> file = SafeTensorsFile::open(path);
  ASSERT_FALSE(file.ok());
  EXPECT_EQ(file.status().message(),
            path + ": cannot open (No such file or directory)");
}

TEST(SafeTensorsTest, RejectsFileShorterThanLength) {
  std::string path = freshDir() + "/short.safetensors";
  std::ofstream(path, std::ios::binary) << "abcde";
  StatusOr<std::shared_ptr<SafeTensorsFile>> file = SafeTensorsFile::open(path);
  ASSERT_FALSE(file.ok());
  EXPECT_EQ(file.status().message(),
            path + ": file is 5 bytes, shorter than the 8-byte header length");
}

TEST(SafeTensorsTest, RejectsHeaderLongerThanFile) {
  std::string path = freshDir() + "/truncated.safetensors";
  // The length field says 200 bytes of header; only 12 follow.
  std::ofstream out(path, std::ios::binary);
  out.write("\xC8\0\0\0\0\0\0\0", 8);
  out << "{\"x\": {\"dty";
  out.close();
  StatusOr<std::shared_ptr<SafeTensorsFile>> file = SafeTensorsFile::open(path);
  ASSERT_FALSE(file.ok());
  EXPECT_EQ(file.status().message(),
            path + ": header length 200 exceeds the 11 bytes after the "
                   "length field");
}

TEST(SafeTensorsTest, RejectsBadJson) {
  std::string path = freshDir() + "/bad.safetensors";
  EXPECT_EQ(openError(path, "{\"x\": [", {}),
            path + ": header: not valid JSON: parse error at line 1, column "
                   "8: syntax error while parsing value - unexpected end of "
                   "input; expected '[', '{', or a literal");
  EXPECT_EQ(openError(path, "[1, 2]", {}),
            path + ": header is not a JSON object");
}

TEST(SafeTensorsTest, RejectsTruncatedData) {
  std::string path = freshDir() + "/cut.safetensors";
  std::string header =
      R"({"x": {"dtype": "F32", "shape": [4], "data_offsets": [0, 16]}})";
  EXPECT_EQ(openError(path, header, Bytes(10)),
            path + ": tensor x has data_offsets [0,16] outside the data "
                   "section of 10 bytes");
}

TEST(SafeTensorsTest, RejectsReversedOffsets) {
  std::string path = freshDir() + "/reversed.safetensors";
  std::string header =
      R"({"x": {"dtype": "F32", "shape": [1], "data_offsets": [8, 4]}})";
  EXPECT_EQ(openError(path, header, Bytes(8)),
            path + ": tensor x has data_offsets [8,4] outside the data "
                   "section of 8 bytes");
}

TEST(SafeTensorsTest, RejectsOffsetsNotMatchingShape) {
  std::string path = freshDir() + "/mismatch.safetensors";
  std::string header =
      R"({"x": {"dtype": "F32", "shape": [3], "data_offsets": [0, 8]}})";
  EXPECT_EQ(openError(path, header, Bytes(12)),
            path + ": tensor x has 8 bytes at data_offsets [0,8], expected "
                   "shape [3] x 4 bytes");
}

TEST(SafeTensorsTest, RejectsUnsupportedDType) {
  std::string path = freshDir() + "/i64.safetensors";
  std::string header =
      R"({"ids": {"dtype": "I64", "shape": [1], "data_offsets": [0, 8]}})";
  EXPECT_EQ(openError(path, header, Bytes(8)),
            path + ": tensor ids has unsupported dtype I64 (supported: "
                   "F32, BF16, F16, F8_E4M3, F64)");
}

// The data section is the tensors' bytes back to back, each byte in exactly
// one tensor, as the format's reference reader requires: anything else reads
// one tensor's bytes as another's, or carries bytes no tensor accounts for.

/// A header entry: F32 [elements] at data_offsets [begin, end].
std::string f32Entry(const std::string &name, int elements, int begin,
                     int end) {
  return "\"" + name + "\": {\"dtype\": \"F32\", \"shape\": [" +
         std::to_string(elements) + "], \"data_offsets\": [" +
         std::to_string(begin) + ", " + std::to_string(end) + "]}";
}

TEST(SafeTensorsTest, AcceptsTensorsBackToBackInAnyHeaderOrder) {
  std::string path = freshDir() + "/order.safetensors";
  // b is first in the data; the empty tensor e sits between a and b.
  std::string header = "{" + f32Entry("a", 4, 16, 32) + ", " +
                       f32Entry("b", 4, 0, 16) + ", " +
                       f32Entry("e", 0, 16, 16) + "}";
  EXPECT_EQ(openError(path, header, Bytes(32)), "");
}

TEST(SafeTensorsTest, RejectsOverlappingTensors) {
  std::string path = freshDir() + "/overlap.safetensors";
  std::string header =
      "{" + f32Entry("a", 4, 0, 16) + ", " + f32Entry("b", 4, 8, 24) + "}";
  EXPECT_EQ(openError(path, header, Bytes(24)),
            path + ": tensors a (data_offsets [0, 16]) and b (data_offsets "
                   "[8, 24]) overlap");
}

TEST(SafeTensorsTest, RejectsTensorReachingIntoItsNeighbour) {
  std::string path = freshDir() + "/reach.safetensors";
  // a ends 4 bytes into b, which starts where a would have ended.
  std::string header = "{" + f32Entry("a", 5, 0, 20) + ", " +
                       f32Entry("b", 4, 16, 32) + ", " +
                       f32Entry("c", 1, 32, 36) + "}";
  EXPECT_EQ(openError(path, header, Bytes(36)),
            path + ": tensors a (data_offsets [0, 20]) and b (data_offsets "
                   "[16, 32]) overlap");
}

TEST(SafeTensorsTest, RejectsTwoTensorsOnTheSameBytes) {
  std::string path = freshDir() + "/alias.safetensors";
  std::string header =
      "{" + f32Entry("a", 4, 0, 16) + ", " + f32Entry("b", 4, 0, 16) + "}";
  EXPECT_EQ(openError(path, header, Bytes(16)),
            path + ": tensors a (data_offsets [0, 16]) and b (data_offsets "
                   "[0, 16]) overlap");
}

TEST(SafeTensorsTest, RejectsTensorNamedTwice) {
  std::string path = freshDir() + "/twice.safetensors";
  std::string header =
      "{" + f32Entry("x", 4, 0, 16) + ", " + f32Entry("x", 4, 16, 32) + "}";
  EXPECT_EQ(openError(path, header, Bytes(32)),
            path + ": tensor x is named twice in the header");
}

TEST(SafeTensorsTest, RejectsFieldGivenTwice) {
  std::string path = freshDir() + "/field.safetensors";
  std::string header = R"({"x": {"dtype": "F32", "shape": [4], )"
                       R"("data_offsets": [0, 16], "dtype": "F16"}})";
  EXPECT_EQ(openError(path, header, Bytes(16)),
            path + ": header: /x/dtype is given twice");
}

TEST(SafeTensorsTest, RejectsBytesAfterTheLastTensor) {
  std::string path = freshDir() + "/trailing.safetensors";
  std::string header = "{" + f32Entry("x", 4, 0, 16) + "}";
  EXPECT_EQ(openError(path, header, Bytes(20)),
            path + ": 4 bytes after the last tensor x (data_offsets [0, 16]) "
                   "belong to no tensor");
  EXPECT_EQ(openError(path, "{}", Bytes(3)),
            path + ": 3 bytes after the header belong to no tensor");
}

TEST(SafeTensorsTest, RejectsBytesBetweenTensors) {
  std::string path = freshDir() + "/gap.safetensors";
  std::string header =
      "{" + f32Entry("a", 4, 0, 16) + ", " + f32Entry("b", 4, 20, 36) + "}";
  EXPECT_EQ(openError(path, header, Bytes(36)),
            path + ": 4 bytes between tensors a (data_offsets [0, 16]) and b "
                   "(data_offsets [20, 36]) belong to no tensor");
}

TEST(SafeTensorsTest, RejectsHeaderNestedTooDeep) {
  std::string path = freshDir() + "/deep.safetensors";
  // 100,000 nested arrays: quoting them in a message overflowed the stack.
  std::string deep = std::string(100000, '[') + std::string(100000, ']');
  EXPECT_EQ(openError(path, "{\"x\": " + deep + "}", {}),
            path + ": header: arrays and objects nested more than 64 levels "
                   "deep (from byte 69)");
}

TEST(SafeTensorsTest, QuotesAtMost80BytesOfAnEntry) {
  std::string path = freshDir() + "/long.safetensors";
  std::string header = "{\"x\": \"" + std::string(100000, 'y') + "\"}";
  EXPECT_EQ(openError(path, header, {}),
            path + ": tensor x needs dtype, shape and data_offsets [begin, "
                   "end], found \"" +
                std::string(79, 'y') + "...");
}

TEST(SafeTensorsTest, OpensSingleFileCheckpoint) {
  std::string dir = freshDir();
  writeSafeTensors(
      dir + "/model.safetensors",
      R"({"a": {"dtype": "BF16", "shape": [2], "data_offsets": [0, 4]}})",
      le16({0x3F80, 0x4000}));
  StatusOr<Checkpoint> checkpoint = Checkpoint::open(dir);
  ASSERT_TRUE(checkpoint.ok()) << checkpoint.status().message();
  const TensorView *a = checkpoint->find("a");
  ASSERT_NE(a, nullptr);
  EXPECT_EQ(a->at(1), 2.0f);
  EXPECT_EQ(a->file, dir + "/model.safetensors");
  EXPECT_EQ(checkpoint->find("b"), nullptr);
  EXPECT_EQ(checkpoint->paths(),
            std::vector<std::string>{dir + "/model.safetensors"});
}

/// Two shards: "a" (F32 [2]) in the first, "b" (F16 [1]) in the second.
std::string writeShardedCheckpoint(const json &weightMap) {
  std::string dir = freshDir();
  writeSafeTensors(
      dir + "/model-00001-of-00002.safetensors",
      R"({"a": {"dtype": "F32", "shape": [2], "data_offsets": [0, 8]}})",
      {0x00, 0x00, 0x80, 0x3F, 0x00, 0x00, 0x40, 0x40}); // 1.0f, 3.0f
  writeSafeTensors(
      dir + "/model-00002-of-00002.safetensors",
      R"({"b": {"dtype": "F16", "shape": [1], "data_offsets": [0, 2]}})",
      le16({0xBC00})); // -1.0
  json index = {{"metadata", {{"total_size", 10}}}, {"weight_map", weightMap}};
  std::ofstream(dir + "/model.safetensors.index.json") << index.dump();
  return dir;
}

TEST(SafeTensorsTest, OpensShardedCheckpoint) {
  std::string dir =
      writeShardedCheckpoint({{"a", "model-00001-of-00002.safetensors"},
                              {"b", "model-00002-of-00002.safetensors"}});
  StatusOr<Checkpoint> checkpoint = Checkpoint::open(dir);
  ASSERT_TRUE(checkpoint.ok()) << checkpoint.status().message();
  EXPECT_EQ(checkpoint->tensors().size(), 2u);
  const TensorView *a = checkpoint->find("a");
  const TensorView *b = checkpoint->find("b");
  ASSERT_NE(a, nullptr);
  ASSERT_NE(b, nullptr);
  EXPECT_EQ(a->at(0), 1.0f);
  EXPECT_EQ(a->at(1), 3.0f);
  EXPECT_EQ(b->dtype, DType::F16);
  EXPECT_EQ(b->at(0), -1.0f);
  EXPECT_EQ(b->file, dir + "/model-00002-of-00002.safetensors");
  EXPECT_EQ(
      checkpoint->paths(),
      (std::vector<std::string>{dir + "/model.safetensors.index.json",
                                dir + "/model-00001-of-00002.safetensors",
                                dir + "/model-00002-of-00002.safetensors"}));
}

TEST(SafeTensorsTest, RejectsIndexNamingMissingShard) {
  std::string dir =
      writeShardedCheckpoint({{"a", "model-00001-of-00002.safetensors"},
                              {"b", "model-00003-of-00002.safetensors"}});
  StatusOr<Checkpoint> checkpoint = Checkpoint::open(dir);
  ASSERT_FALSE(checkpoint.ok());
  EXPECT_EQ(checkpoint.status().message(),
            dir +
                "/model.safetensors.index.json: shard "
                "model-00003-of-00002.safetensors: " +
                dir +
                "/model-00003-of-00002.safetensors: cannot open (No "
                "such file or directory)");
}

TEST(SafeTensorsTest, RejectsIndexNamingShardOutsideTheFolder) {
  for (const char *shard : {"../model-00001-of-00002.safetensors", "..", "sub/x.safetensors"}) {
    std::string dir = writeShardedCheckpoint(
        {{"a", "model-00001-of-00002.safetensors"}, {"b", shard}});
    StatusOr<Checkpoint> checkpoint = Checkpoint::open(dir);
    ASSERT_FALSE(checkpoint.ok()) << shard;
    EXPECT_EQ(checkpoint.status().message(),
              dir + "/model.safetensors.index.json: weight_map[b] must name a file in " +
                  dir + ", found '" + shard + "'");
  }
}

TEST(SafeTensorsTest, RejectsIndexPlacingTensorInWrongShard) {
  std::string dir =
      writeShardedCheckpoint({{"a", "model-00001-of-00002.safetensors"},
                              {"b", "model-00001-of-00002.safetensors"}});
  StatusOr<Checkpoint> checkpoint = Checkpoint::open(dir);
  ASSERT_FALSE(checkpoint.ok());
  EXPECT_EQ(checkpoint.status().message(),
            dir + "/model-00001-of-00002.safetensors: tensor b missing (the "
                  "index places it in this shard)");
}

TEST(SafeTensorsTest, RejectsTensorInTwoShards) {
  // "b" in both shards, the index placing it in the second: the first's
  // copy would be dropped unread.
  std::string dir = freshDir();
  writeSafeTensors(
      dir + "/one.safetensors",
      R"({"a": {"dtype": "BF16", "shape": [1], "data_offsets": [0, 2]},
                       "b": {"dtype": "BF16", "shape": [1], "data_offsets": [2, 4]}})",
      le16({0x3F80, 0x4000}));
  writeSafeTensors(
      dir + "/two.safetensors",
      R"({"b": {"dtype": "BF16", "shape": [1], "data_offsets": [0, 2]}})",
      le16({0x4040}));
  json index = {
      {"weight_map", {{"a", "one.safetensors"}, {"b", "two.safetensors"}}}};
  std::ofstream(dir + "/model.safetensors.index.json") << index.dump();
  StatusOr<Checkpoint> checkpoint = Checkpoint::open(dir);
  ASSERT_FALSE(checkpoint.ok());
  EXPECT_EQ(checkpoint.status().message(),
            dir + "/one.safetensors: tensor b is also in two.safetensors, "
                  "where the index places it");
}

TEST(SafeTensorsTest, RejectsFolderWithoutCheckpoint) {
  std::string dir = freshDir();
  StatusOr<Checkpoint> checkpoint = Checkpoint::open(dir);
  ASSERT_FALSE(checkpoint.ok());
  EXPECT_EQ(checkpoint.status().message(),
            dir + ": neither model.safetensors nor "
                  "model.safetensors.index.json found");
}

/// hidden 4, intermediate 6, 1 layer, 2 heads, 1 KV head, head_dim 3, vocab 5.
ModelConfig smallConfig() {
  ModelConfig config;
  config.hiddenSize = 4;
  config.intermediateSize = 6;
  config.numLayers = 1;
  config.numHeads = 2;
  config.numKVHeads = 1;
  config.headDim = 3;
  config.vocabSize = 5;
  config.layerKinds = {LayerKind::Full};
  return config;
}

/// The tensors of smallConfig(), worked out by hand from the HF model code.
std::vector<TensorSpec> smallConfigTensors() {
  return {{"model.embed_tokens.weight", {5, 4}},
          {"model.layers.0.input_layernorm.weight", {4}},
          {"model.layers.0.self_attn.q_proj.weight", {6, 4}},
          {"model.layers.0.self_attn.k_proj.weight", {3, 4}},
          {"model.layers.0.self_attn.v_proj.weight", {3, 4}},
          {"model.layers.0.mlp.gate_proj.weight", {6, 4}},
          {"model.layers.0.mlp.up_proj.weight", {6, 4}},
          {"model.layers.0.self_attn.o_proj.weight", {4, 6}},
          {"model.layers.0.mlp.down_proj.weight", {4, 6}},
          {"model.norm.weight", {4}}};
}

/// Writes dir/model.safetensors with zero-filled tensors, BF16 but those
/// named in `fp8` (F8_E4M3).
void writeCheckpoint(const std::string &dir,
                     const std::vector<TensorSpec> &specs,
                     const std::set<std::string> &fp8 = {}) {
  json header = json::object();
  size_t offset = 0;
  for (const TensorSpec &spec : specs) {
    bool byte = fp8.count(spec.name);
    size_t bytes = byte ? 1 : 2;
    for (int64_t d : spec.shape)
      bytes *= d;
    header[spec.name] = {{"dtype", byte ? "F8_E4M3" : "BF16"},
                         {"shape", spec.shape},
                         {"data_offsets", {offset, offset + bytes}}};
    offset += bytes;
  }
  writeSafeTensors(dir + "/model.safetensors", header.dump(), Bytes(offset));
}

TEST(SafeTensorsTest, ExpectedTensorsFollowConfig) {
  std::vector<TensorSpec> got = expectedTensors(smallConfig());
  std::vector<TensorSpec> want = smallConfigTensors();
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < want.size(); ++i) {
    EXPECT_EQ(got[i].name, want[i].name);
    EXPECT_EQ(got[i].shape, want[i].shape) << want[i].name;
  }
}

TEST(SafeTensorsTest, CheckTensorsAcceptsCompleteCheckpoint) {
  std::string dir = freshDir();
  std::vector<TensorSpec> specs = smallConfigTensors();
  // RoPE's inverse frequencies, which some exporters keep, are not read.
  specs.push_back({"model.layers.0.self_attn.rotary_emb.inv_freq", {1}});
  // An FP8 weight's per-output-channel scales, as [rows] or [rows, 1].
  specs.push_back({"model.layers.0.self_attn.k_proj.weight_scale", {3}});
  specs.push_back({"model.layers.0.mlp.down_proj.weight_scale", {4, 1}});
  writeCheckpoint(dir, specs,
                  {"model.layers.0.self_attn.k_proj.weight",
                   "model.layers.0.mlp.down_proj.weight"});
  StatusOr<Checkpoint> checkpoint = Checkpoint::open(dir);
  ASSERT_TRUE(checkpoint.ok()) << checkpoint.status().message();
  Status status = checkTensors(smallConfig(), *checkpoint, dir);
  EXPECT_TRUE(status.ok()) << status.message();
}

TEST(SafeTensorsTest, CheckTensorsReportsMissingTensor) {
  std::string dir = freshDir();
  std::vector<TensorSpec> specs = smallConfigTensors();
  specs.erase(specs.begin() + 6); // mlp.up_proj.weight
  writeCheckpoint(dir, specs);
  StatusOr<Checkpoint> checkpoint = Checkpoint::open(dir);
  ASSERT_TRUE(checkpoint.ok()) << checkpoint.status().message();
  Status status = checkTensors(smallConfig(), *checkpoint, dir);
  ASSERT_FALSE(status.ok());
  EXPECT_EQ(status.message(),
            dir + ": tensor model.layers.0.mlp.up_proj.weight missing");
}

TEST(SafeTensorsTest, CheckTensorsReportsWrongShape) {
  std::string dir = freshDir();
  std::vector<TensorSpec> specs = smallConfigTensors();
  specs[2].shape = {4, 6}; // q_proj transposed
  writeCheckpoint(dir, specs);
  StatusOr<Checkpoint> checkpoint = Checkpoint::open(dir);
  ASSERT_TRUE(checkpoint.ok()) << checkpoint.status().message();
  Status status = checkTensors(smallConfig(), *checkpoint, dir);
  ASSERT_FALSE(status.ok());
  EXPECT_EQ(status.message(),
            dir + ": tensor model.layers.0.self_attn.q_proj.weight has shape "
                  "[4, 6], expected [6, 4]");
}

/// checkTensors' message for smallConfigTensors() plus `extra` (with
/// `fp8` weights), or "" when it accepts them.
std::string checkWithExtra(const TensorSpec &extra,
                           const std::set<std::string> &fp8 = {}) {
  std::string dir = freshDir();
  std::vector<TensorSpec> specs = smallConfigTensors();
  specs.push_back(extra);
  writeCheckpoint(dir, specs, fp8);
  StatusOr<Checkpoint> checkpoint = Checkpoint::open(dir);
  if (!checkpoint.ok())
    return "Checkpoint::open: " + checkpoint.status().message();
  Status status = checkTensors(smallConfig(), *checkpoint, dir);
  return status.ok() ? "" : status.message().substr(dir.size());
}

TEST(SafeTensorsTest, CheckTensorsRejectsTensorsTheModelDoesNotRead) {
  // A layer past num_hidden_layers, a bias, an untied output projection:
  // the config describes another model than the checkpoint.
  for (const char *name :
       {"model.layers.1.input_layernorm.weight",
        "model.layers.0.self_attn.q_proj.bias", "lm_head.weight"})
    EXPECT_EQ(
        checkWithExtra({name, {4}}),
        std::string(": tensor ") + name +
            " is not one the model reads (config.json: num_hidden_layers 1, no "
            "biases, the output projection tied to "
            "model.embed_tokens.weight); the checkpoint and its config "
            "disagree");
}

TEST(SafeTensorsTest, CheckTensorsAcceptsACopyOfTheTiedEmbedding) {
  // Some exporters write the tied matrix twice; zeros equal the embedding's.
  EXPECT_EQ(checkWithExtra({"lm_head.weight", {5, 4}}), "");
}

TEST(SafeTensorsTest, CheckTensorsRejectsScalesOfUnquantizedWeights) {
  // A BF16 weight beside a weight_scale: dequantized already, or codes
  // whose scale would be dropped; either way not what the export meant.
  EXPECT_EQ(
      checkWithExtra({"model.layers.0.self_attn.k_proj.weight_scale", {3}}),
      ": tensor model.layers.0.self_attn.k_proj.weight_scale scales "
      "BF16 weights: only F8_E4M3 weights take a weight_scale (a "
      "dequantized weight has none)");
}

TEST(SafeTensorsTest, CheckTensorsRejectsScalesOfAnotherShape) {
  // o_proj is [4, 6]: [1, 6] would be per input channel.
  std::set<std::string> fp8 = {"model.layers.0.self_attn.o_proj.weight"};
  EXPECT_EQ(checkWithExtra(
                {"model.layers.0.self_attn.o_proj.weight_scale", {1, 6}}, fp8),
            ": tensor model.layers.0.self_attn.o_proj.weight_scale has shape "
            "[1, 6], expected [4] or [4, 1] (one scale per output channel)");
  EXPECT_EQ(checkWithExtra(
                {"model.layers.0.self_attn.o_proj.weight_scale", {4, 1}}, fp8),
            "");
}

/// The tiny checkpoints: 8 layers x 8 tensors + embedding + final norm.
void checkTinyCheckpoint(const std::string &name, DType dtype) {
  std::string dir = std::string(COHERE2C_TEST_DATA_DIR) + "/models/" + name;
  StatusOr<ModelConfig> config = ModelConfig::fromFile(dir + "/config.json");
  ASSERT_TRUE(config.ok()) << config.status().message();
  StatusOr<Checkpoint> checkpoint = Checkpoint::open(dir);
  ASSERT_TRUE(checkpoint.ok()) << checkpoint.status().message();
  EXPECT_EQ(checkpoint->tensors().size(), 66u);
  const TensorView *embedding = checkpoint->find("model.embed_tokens.weight");
  ASSERT_NE(embedding, nullptr);
  EXPECT_EQ(embedding->dtype, dtype);
  EXPECT_EQ(embedding->shape, (std::vector<int64_t>{512, 128}));
  EXPECT_EQ(embedding->numBytes, 512u * 128u * dtypeSize(dtype));
  Status status = checkTensors(*config, *checkpoint, dir);
  EXPECT_TRUE(status.ok()) << status.message();
}

TEST(SafeTensorsTest, ChecksTinyCohere2) {
  checkTinyCheckpoint("tiny-cohere2", DType::F32);
}

TEST(SafeTensorsTest, ChecksTinyCohere2BF16) {
  checkTinyCheckpoint("tiny-cohere2-bf16", DType::BF16);
}

} // namespace
