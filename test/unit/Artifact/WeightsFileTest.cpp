//===- WeightsFileTest.cpp - Tests for the OUT.weights header -------------===//
//
// The expected bytes are the format of WeightsFile.h.
//
//===----------------------------------------------------------------------===//
#include "Artifact/WeightsFile.h"

#include <gtest/gtest.h>

#include <cstring>
#include <vector>

using namespace cohere2c;

namespace {

const std::string kId = "00112233445566778899aabbccddeeff";
const std::string kRemedy =
    ": recompile, or pass --checkpoint DIR or --random-weights SEED";

std::vector<unsigned char> header(const std::string &id, uint64_t dataBytes) {
  std::vector<unsigned char> page(kWeightsHeaderBytes, 0xAA);
  writeWeightsHeader(page.data(), id, dataBytes);
  return page;
}

std::string check(const std::vector<unsigned char> &page, uint64_t fileBytes,
                  const std::string &id, uint64_t dataBytes) {
  Status s =
      checkWeightsHeader(page.data(), fileBytes, "w.weights", id, dataBytes);
  return s.ok() ? "" : s.message();
}

TEST(WeightsFileTest, HeaderLayout) {
  std::vector<unsigned char> page = header(kId, 0x0102030405ull);
  EXPECT_EQ(std::memcmp(page.data(), "COHERE2CWEIGHTS\0", 16), 0);
  EXPECT_EQ(std::vector<unsigned char>(page.begin() + 16, page.begin() + 24),
            (std::vector<unsigned char>{1, 0, 0, 0, 0, 0, 0, 0}));
  EXPECT_EQ(std::vector<unsigned char>(page.begin() + 24, page.begin() + 40),
            (std::vector<unsigned char>{0x00, 0x11, 0x22, 0x33, 0x44, 0x55,
                                        0x66, 0x77, 0x88, 0x99, 0xaa, 0xbb,
                                        0xcc, 0xdd, 0xee, 0xff}));
  EXPECT_EQ(std::vector<unsigned char>(page.begin() + 40, page.begin() + 48),
            (std::vector<unsigned char>{5, 4, 3, 2, 1, 0, 0, 0}));
  for (size_t i = 48; i < kWeightsHeaderBytes; ++i)
    ASSERT_EQ(page[i], 0) << "byte " << i;
}

TEST(WeightsFileTest, AcceptsItsOwnHeader) {
  EXPECT_EQ(check(header(kId, 1000), 4096 + 1000, kId, 1000), "");
}

TEST(WeightsFileTest, RejectsAnotherId) {
  std::string other = "ffeeddccbbaa99887766554433221100";
  EXPECT_EQ(check(header(kId, 1000), 5096, other, 1000),
            "w.weights: was written for another artifact (weights id " + kId +
                ", the artifact's is " + other + ")" + kRemedy);
  EXPECT_EQ(check(header(kId, 1000), 5096, "", 1000),
            "w.weights: was written for another artifact (this one was "
            "compiled without weights)" +
                kRemedy);
}

TEST(WeightsFileTest, RejectsAnotherSize) {
  EXPECT_EQ(check(header(kId, 1000), 5096, kId, 2000),
            "w.weights: holds 1000 bytes of weights, but the artifact's "
            "weight layout needs 2000" +
                kRemedy);
  EXPECT_EQ(check(header(kId, 1000), 5000, kId, 1000),
            "w.weights: 5000 bytes, but its header says 4096 + 1000 (cut "
            "short?)" +
                kRemedy);
  EXPECT_EQ(check(header(kId, 1000), 100, kId, 1000),
            "w.weights: 100 bytes, shorter than the 4096-byte header of a "
            "weights file" +
                kRemedy);
}

TEST(WeightsFileTest, RejectsMissingMagicAndOtherVersion) {
  std::vector<unsigned char> page = header(kId, 1000);
  page[15] = 'X';
  EXPECT_EQ(check(page, 5096, kId, 1000),
            "w.weights: not a cohere2c weights file (no COHERE2CWEIGHTS "
            "header)" +
                kRemedy);
  page = header(kId, 1000);
  page[16] = 7;
  EXPECT_EQ(check(page, 5096, kId, 1000),
            "w.weights: weights file format version 7, expected 1" + kRemedy);
}

TEST(WeightsFileTest, NewIdsAreRandomHex) {
  std::string a = newWeightsId(), b = newWeightsId();
  EXPECT_EQ(a.size(), 32u);
  EXPECT_TRUE(isWeightsId(a)) << a;
  EXPECT_NE(a, b);
  EXPECT_EQ(check(header(a, 8), 4104, a, 8), "");
}

TEST(WeightsFileTest, IsWeightsId) {
  EXPECT_TRUE(isWeightsId(""));
  EXPECT_TRUE(isWeightsId(kId));
  EXPECT_FALSE(isWeightsId(kId.substr(1)));
  EXPECT_FALSE(isWeightsId("00112233445566778899AABBCCDDEEFF"));
  EXPECT_FALSE(isWeightsId("00112233445566778899aabbccddeefg"));
}

} // namespace
