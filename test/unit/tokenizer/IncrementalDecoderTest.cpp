//===- IncrementalDecoderTest.cpp - Tests of streaming decoding -----------===//
//
// Pushing the ids of every oracle case one at a time must give, joined with
// finish(), what tokenizers' decode gave for all of them, and no piece may
// be invalid UTF-8 or end inside a character.
//
//===----------------------------------------------------------------------===//
#include "TokenizerTestData.h"

#include <gtest/gtest.h>

using namespace cohere2c::text;
using namespace cohere2c::text::testing;
using nlohmann::json;

namespace {

/// Whether `text` is well-formed UTF-8 (nothing cut off at its end).
bool isWellFormedUtf8(const std::string &text) {
  try {
    (void)json(text).dump(); // nlohmann throws on ill-formed UTF-8.
    return true;
  } catch (const json::type_error &) {
    return false;
  }
}

/// Streams `ids` through an IncrementalDecoder, checking each piece.
std::string streamed(const std::vector<int32_t> &ids, bool skipSpecialTokens) {
  IncrementalDecoder decoder(trainedTokenizer(), skipSpecialTokens);
  std::string text;
  for (int32_t id : ids) {
    auto piece = decoder.push(id);
    EXPECT_TRUE(piece.ok()) << piece.status().message();
    if (!piece.ok())
      return text;
    EXPECT_TRUE(isWellFormedUtf8(*piece)) << json(ids).dump();
    text += *piece;
  }
  std::string last = decoder.finish();
  EXPECT_TRUE(isWellFormedUtf8(last));
  return text + last;
}

void expectStreamsLikeTokenizers(const json &c) {
  auto ids = c["ids"].get<std::vector<int32_t>>();
  SCOPED_TRACE(c["ids"].dump());
  EXPECT_EQ(streamed(ids, false), c["decoded"].get<std::string>());
  EXPECT_EQ(streamed(ids, true), c["decoded_skip_special"].get<std::string>());
}

TEST(IncrementalDecoderTest, StreamsTheEncodeCasesLikeDecode) {
  for (const json &c : generatedCases()["encode"])
    expectStreamsLikeTokenizers(c);
}

TEST(IncrementalDecoderTest, StreamsRandomIdsLikeDecode) {
  for (const json &c : generatedCases()["decode"])
    expectStreamsLikeTokenizers(c);
}

TEST(IncrementalDecoderTest, StreamsTheModelFolderCasesLikeDecode) {
  for (const json &c : modelCases())
    EXPECT_EQ(streamed(c["ids_no_special"].get<std::vector<int32_t>>(), false),
              c["decoded"].get<std::string>());
}

/// The ids of the byte tokens of "€" (E2 82 AC), written in GPT-2's
/// byte-level alphabet: 'â' (U+00E2), 'Ĥ' (U+0124), '¬' (U+00AC).
std::vector<int32_t> euroByteIds() {
  std::vector<int32_t> ids;
  for (const char *token : {"\u00E2", "\u0124", "\u00AC"})
    ids.push_back(*trainedTokenizer().tokenToId(token));
  return ids;
}

TEST(IncrementalDecoderTest, HoldsBackACharacterUntilItsLastByte) {
  std::vector<int32_t> ids = euroByteIds();
  IncrementalDecoder decoder(trainedTokenizer(), false);
  EXPECT_EQ(*decoder.push(ids[0]), "");
  EXPECT_EQ(*decoder.push(ids[1]), "");
  EXPECT_EQ(*decoder.push(ids[2]), "\xE2\x82\xAC");
  EXPECT_EQ(decoder.finish(), "");
}

TEST(IncrementalDecoderTest, FinishesAnUnfinishedCharacterAsOneReplacement) {
  std::vector<int32_t> ids = euroByteIds();
  ids.pop_back();
  auto decoded = trainedTokenizer().decode(ids, false);
  ASSERT_TRUE(decoded.ok());
  // from_utf8_lossy: one U+FFFD for the cut-off character.
  EXPECT_EQ(*decoded, "\xEF\xBF\xBD");
  EXPECT_EQ(streamed(ids, false), *decoded);
}

TEST(IncrementalDecoderTest, ReplacesAnInvalidSequenceAsSoonAsItEnds) {
  // E2 82 then 'A': the maximal subpart E2 82 is one U+FFFD, known at 'A'.
  std::vector<int32_t> ids = euroByteIds();
  IncrementalDecoder decoder(trainedTokenizer(), false);
  EXPECT_EQ(*decoder.push(ids[0]), "");
  EXPECT_EQ(*decoder.push(ids[1]), "");
  EXPECT_EQ(*decoder.push(*trainedTokenizer().tokenToId("A")), "\xEF\xBF\xBD"
                                                               "A");
  EXPECT_EQ(decoder.finish(), "");
}

TEST(IncrementalDecoderTest, RejectsAnUnknownIdAndKeepsGoing) {
  IncrementalDecoder decoder(trainedTokenizer(), false);
  auto bad = decoder.push(1 << 20);
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().message(),
            "decode: id 1048576 is not in the vocabulary (4096 ids)");
  auto ids = trainedTokenizer().encode("Hello", false);
  ASSERT_TRUE(ids.ok());
  std::string text;
  for (int32_t id : *ids)
    text += *decoder.push(id);
  EXPECT_EQ(text + decoder.finish(), "Hello");
}

} // namespace
