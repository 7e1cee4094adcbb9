//===- WeightPackingTest.cpp - bf16 and e4m3 conversions, rowwise scales --===//
//
// Expected bytes are worked out by hand from the OCP FP8 E4M3 format: bias
// 7, 3 mantissa bits, normal (1 + m/8) 2^(e-7), subnormal m 2^-9, largest
// finite 448 (0x7E), 0x7F NaN; rounding to nearest even, saturating.
//
//===----------------------------------------------------------------------===//

#include "Artifact/WeightPacking.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <vector>

namespace cohere2c {
namespace {

TEST(FloatToE4M3Test, EncodesExactValues) {
  EXPECT_EQ(floatToE4M3(1.0f), 0x38);   // e = 7
  EXPECT_EQ(floatToE4M3(0.5f), 0x30);
  EXPECT_EQ(floatToE4M3(1.125f), 0x39);
  EXPECT_EQ(floatToE4M3(448.0f), 0x7E);
  EXPECT_EQ(floatToE4M3(-448.0f), 0xFE);
  EXPECT_EQ(floatToE4M3(0.015625f), 0x08); // 2^-6, the smallest normal
  EXPECT_EQ(floatToE4M3(0.0f), 0x00);
  EXPECT_EQ(floatToE4M3(-0.0f), 0x80);
}

TEST(FloatToE4M3Test, RoundsHalfwayToEven) {
  EXPECT_EQ(floatToE4M3(1.0625f), 0x38); // between 1 (m 0) and 1.125 (m 1)
  EXPECT_EQ(floatToE4M3(1.1875f), 0x3A); // between 1.125 (m 1) and 1.25 (m 2)
  EXPECT_EQ(floatToE4M3(168.0f), 0x72);  // between 160 (m 2) and 176 (m 3)
  EXPECT_EQ(floatToE4M3(1.05f), 0x38); // below the midpoint 1.0625
  EXPECT_EQ(floatToE4M3(1.07f), 0x39); // above it
}

TEST(FloatToE4M3Test, SaturatesBeyond448) {
  EXPECT_EQ(floatToE4M3(464.0f), 0x7E); // would round to 480: saturate
  EXPECT_EQ(floatToE4M3(500.0f), 0x7E);
  EXPECT_EQ(floatToE4M3(-1.0e6f), 0xFE);
  EXPECT_EQ(floatToE4M3(std::numeric_limits<float>::infinity()), 0x7E);
  EXPECT_EQ(floatToE4M3(std::numeric_limits<float>::quiet_NaN()), 0x7F);
}

TEST(FloatToE4M3Test, Subnormals) {
  const float step = 0.001953125f; // 2^-9
  EXPECT_EQ(floatToE4M3(step), 0x01);
  EXPECT_EQ(floatToE4M3(7 * step), 0x07);
  EXPECT_EQ(floatToE4M3(0.75f * step), 0x01);
  // Below half the smallest subnormal: zero; exactly half: to even, zero.
  EXPECT_EQ(floatToE4M3(0.25f * step), 0x00);
  EXPECT_EQ(floatToE4M3(0.5f * step), 0x00);
  EXPECT_EQ(floatToE4M3(-1.0e-7f), 0x80);
  // 7.5 steps: halfway between 7 (odd) and 8 = 2^-6: to 2^-6.
  EXPECT_EQ(floatToE4M3(7.5f * step), 0x08);
}

TEST(QuantizeRowE4M3Test, AllZeroRowGivesZerosAndAFiniteScale) {
  std::vector<float> row(16, 0.0f);
  std::vector<uint8_t> out(16, 0xFF);
  float scale = quantizeRowE4M3(row.data(), row.size(), out.data());
  EXPECT_TRUE(std::isfinite(scale));
  EXPECT_GT(scale, 0.0f);
  for (uint8_t b : out)
    EXPECT_EQ(b, 0x00);
}

TEST(QuantizeRowE4M3Test, OneHugeValueSetsTheScale) {
  // scale = 1000 / 448; 1 / scale = 0.448 -> 14 * 2^-5 = 0.4375 (1.75 * 2^-2,
  // 0x2E); 0.001 / scale = 0.000448 < 2^-10 -> 0.
  std::vector<float> row = {1000.0f, 1.0f, -1.0f, 0.001f};
  std::vector<uint8_t> out(4);
  float scale = quantizeRowE4M3(row.data(), row.size(), out.data());
  EXPECT_FLOAT_EQ(scale, 1000.0f / 448.0f);
  EXPECT_EQ(out, (std::vector<uint8_t>{0x7E, 0x2E, 0xAE, 0x00}));
}

TEST(QuantizeRowE4M3Test, ExactHalfwayQuotientsRoundToEven) {
  // amax 0.2734375 (bf16) makes 0.1025390625 * 448 / amax = 168 exactly:
  // halfway between 160 and 176, to even 160 (0x72), not 176.
  std::vector<float> row = {0.2734375f, 0.1025390625f};
  std::vector<uint8_t> out(2);
  quantizeRowE4M3(row.data(), row.size(), out.data());
  EXPECT_EQ(out[0], 0x7E);
  EXPECT_EQ(out[1], 0x72);
}

TEST(FloatToBF16Test, RoundsToNearestEven) {
  EXPECT_EQ(floatToBF16(1.0f), 0x3F80);
  EXPECT_EQ(floatToBF16(1.00390625f), 0x3F80); // 1 + 2^-8: halfway, to even
  EXPECT_EQ(floatToBF16(1.01171875f), 0x3F82); // 1 + 3 * 2^-8: halfway, to even
  EXPECT_EQ(floatToBF16(-2.0f), 0xC000);
}

} // namespace
} // namespace cohere2c
