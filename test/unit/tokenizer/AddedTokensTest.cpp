//===- AddedTokensTest.cpp - Tests of finding added tokens in text --------===//
//
// The expected segments are those of tokenizers' own tests of its
// AddedVocabulary (tokenizer/added_vocabulary.rs: options_use_cases,
// test_single_word_is_correct, test_single_word_is_unicode_correct,
// test_lstrip_unicode_space, test_encode_special_tokens), with the tokens
// matched on the raw text (normalized false) where those tests lowercase.
//
//===----------------------------------------------------------------------===//
#include "text/tokenizer/AddedTokens.h"

#include <gtest/gtest.h>

using namespace cohere2c::text;
using nlohmann::json;

namespace {

/// An added token as tokenizer.json writes it.
json token(int id, const std::string &content, bool special = false,
           bool normalized = false, bool lstrip = false, bool rstrip = false,
           bool singleWord = false) {
  return {{"id", id},
          {"content", content},
          {"special", special},
          {"normalized", normalized},
          {"lstrip", lstrip},
          {"rstrip", rstrip},
          {"single_word", singleWord}};
}

/// The segments of `text`, pass 1 then pass 2 (no normalizer), as
/// (text, id) pairs; id -1 for text between tokens.
std::vector<std::pair<std::string, int32_t>> segmentsOf(const json &tokens,
                                                        std::string_view text) {
  // A one-token model: added tokens take ids from 1 on.
  json model = {
      {"type", "BPE"}, {"vocab", {{"a", 0}}}, {"merges", json::array()}};
  std::string source = "tokenizer.json";
  auto bpe = BpeModel::parse(JsonNode(model, source));
  json noNormalizer;
  Normalizer normalizer = Normalizer::parse(JsonNode(noNormalizer, source));
  auto added =
      AddedVocabulary::parse(JsonNode(tokens, source), *bpe, normalizer);
  std::vector<Segment> pass1, pass2;
  added->split(text, false, pass1);
  for (const Segment &segment : pass1) {
    if (segment.id >= 0)
      pass2.push_back(segment);
    else
      added->split(segment.text, true, pass2);
  }
  std::vector<std::pair<std::string, int32_t>> result;
  for (const Segment &segment : pass2)
    result.emplace_back(std::string(segment.text), segment.id);
  return result;
}

using Segments = std::vector<std::pair<std::string, int32_t>>;

TEST(AddedTokensTest, StripsAndKeepsSingleWords) {
  json tokens = {token(1, "my", false, false, true, true), token(2, "name"),
                 token(3, "ony", false, false, false, false, true),
                 token(4, "[CLS]", true), token(5, "[SEP]", true)};
  EXPECT_EQ(segmentsOf(tokens, "[CLS] my name is anthony [SEP]"),
            (Segments{{"[CLS]", 4},
                      {" my ", 1},
                      {"name", 2},
                      {" is anthony ", -1},
                      {"[SEP]", 5}}));
}

TEST(AddedTokensTest, MatchesSingleWordTokensOnlyBetweenNonWordCharacters) {
  json tokens = {token(1, "<mask>", false, false, false, false, true)};
  EXPECT_EQ(
      segmentsOf(tokens, "<mask> my name <mask> a<mask> <mask>ony <mask>"),
      (Segments{{"<mask>", 1},
                {" my name ", -1},
                {"<mask>", 1},
                {" a<mask> <mask>ony ", -1},
                {"<mask>", 1}}));
  // Punctuation is not a word character; a combining mark is.
  EXPECT_EQ(segmentsOf(tokens, "<mask>, <mask>- \u25CC\u0330<mask>"),
            (Segments{{"<mask>", 1},
                      {", ", -1},
                      {"<mask>", 1},
                      {"- \u25CC\u0330<mask>", -1}}));
}

TEST(AddedTokensTest, StripsUnicodeWhitespaceWithoutOverlapping) {
  json tokens = {token(1, "<mask>", false, false, true, true, true)};
  EXPECT_EQ(segmentsOf(tokens, "Hi <mask> there\t<mask>\t<mask>\u2000"),
            (Segments{{"Hi", -1},
                      {" <mask> ", 1},
                      {"there", -1},
                      {"\t<mask>\t", 1},
                      {"<mask>\u2000", 1}}));
}

TEST(AddedTokensTest, PrefersTheLeftmostThenLongestMatch) {
  json tokens = {token(1, "<mask>", true, false, true, true, true),
                 token(2, "ask>", false, true), token(3, "<pad>", true)};
  EXPECT_EQ(segmentsOf(
                tokens,
                "Hi <mask> there\t<mask>\t<mask>\u2000 <pad> <mask><pad><pad>"),
            (Segments{{"Hi", -1},
                      {" <mask> ", 1},
                      {"there", -1},
                      {"\t<mask>\t", 1},
                      {"<mask>\u2000 ", 1},
                      {"<pad>", 3},
                      {" <mask>", 1},
                      {"<pad>", 3},
                      {"<pad>", 3}}));
}

} // namespace
