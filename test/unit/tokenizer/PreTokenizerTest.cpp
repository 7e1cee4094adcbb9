//===- PreTokenizerTest.cpp - Tests of splitting text into words ----------===//
//
// The expected pieces are those of tokenizers' own tests
// (pre_tokenizers/split.rs: basic, regex_string, invert; digits.rs:
// numbers, individual_digits; byte_level.rs: pre_tokenization,
// add_prefix_space). The trained tokenizer's Digits + ByteLevel pipeline is
// covered through its oracle cases (TokenizerTest).
//
//===----------------------------------------------------------------------===//
#include "text/tokenizer/PreTokenizer.h"

#include <gtest/gtest.h>

using namespace cohere2c::text;
using nlohmann::json;

namespace {

/// A pre-tokenizer of `stages` followed by ByteLevel.
std::unique_ptr<PreTokenizer> preTokenizer(json stages, bool addPrefixSpace,
                                           bool useRegex) {
  stages.push_back({{"type", "ByteLevel"},
                    {"add_prefix_space", addPrefixSpace},
                    {"trim_offsets", true},
                    {"use_regex", useRegex}});
  json node = {{"type", "Sequence"}, {"pretokenizers", stages}};
  std::string source = "tokenizer.json";
  return PreTokenizer::parse(JsonNode(node, source));
}

std::vector<std::string> wordsOf(const PreTokenizer &pre,
                                 std::string_view text) {
  Words words;
  cohere2c::Status status = pre.split(text, words);
  EXPECT_TRUE(status.ok()) << status.message();
  std::vector<std::string> result;
  for (size_t i = 0; i < words.size(); ++i)
    result.emplace_back(words[i]);
  return result;
}

using Pieces = std::vector<std::string>;

json split(json pattern, const char *behavior, bool invert) {
  return {{"type", "Split"},
          {"pattern", pattern},
          {"behavior", behavior},
          {"invert", invert}};
}

TEST(PreTokenizerTest, SplitAppliesEachDelimiterBehavior) {
  // split.rs uses \w+|[^\w\s]+ inverted; on ASCII text this is the same.
  json words = {{"Regex", R"([A-Za-z]+|[^A-Za-z\s]+)"}};
  std::string text = "How are you doing?";
  auto run = [&](const char *behavior) {
    return wordsOf(*preTokenizer({split(words, behavior, true)}, false, false),
                   text);
  };
  EXPECT_EQ(run("Removed"), (Pieces{"How", "are", "you", "doing", "?"}));
  EXPECT_EQ(run("Isolated"),
            (Pieces{"How", " ", "are", " ", "you", " ", "doing", "?"}));
  EXPECT_EQ(run("MergedWithPrevious"),
            (Pieces{"How ", "are ", "you ", "doing", "?"}));
  EXPECT_EQ(run("MergedWithNext"),
            (Pieces{"How", " are", " you", " doing", "?"}));
  EXPECT_EQ(run("Contiguous"),
            (Pieces{"How", " ", "are", " ", "you", " ", "doing?"}));
}

TEST(PreTokenizerTest, SplitOnAStringOrItsInvertedComplement) {
  Pieces expected{"Hey,", "man!"};
  EXPECT_EQ(
      wordsOf(*preTokenizer({split({{"Regex", R"(\s+)"}}, "Removed", false)},
                            false, false),
              "Hey, man!"),
      expected);
  EXPECT_EQ(wordsOf(*preTokenizer({split({{"String", " "}}, "Removed", false)},
                                  false, false),
                    "Hey, man!"),
            expected);
  Pieces hellos{"Hello", "Hello", "Hello"};
  EXPECT_EQ(
      wordsOf(*preTokenizer({split({{"String", "Hello"}}, "Removed", true)},
                            false, false),
              "Hello Hello Hello"),
      hellos);
}

TEST(PreTokenizerTest, DigitsSplitsRunsOrEachDigit) {
  json runs = {{"type", "Digits"}, {"individual_digits", false}};
  EXPECT_EQ(wordsOf(*preTokenizer({runs}, false, false), "Hey 123 friend!"),
            (Pieces{"Hey ", "123", " friend!"}));
  json each = {{"type", "Digits"}, {"individual_digits", true}};
  EXPECT_EQ(wordsOf(*preTokenizer({each}, false, false), "Hey 123 friend!"),
            (Pieces{"Hey ", "1", "2", "3", " friend!"}));
}

TEST(PreTokenizerTest, ByteLevelSplitsAtTheGpt2Regex) {
  EXPECT_EQ(wordsOf(*preTokenizer(json::array(), false, true),
                    "Hello my friend, how is your day going?"),
            (Pieces{"Hello", " my", " friend", ",", " how", " is", " your",
                    " day", " going", "?"}));
  EXPECT_EQ(wordsOf(*preTokenizer(json::array(), true, true),
                    "Hello my friend, how is your day going?"),
            (Pieces{" Hello", " my", " friend", ",", " how", " is", " your",
                    " day", " going", "?"}));
}

TEST(PreTokenizerTest, RejectsWhatItCannotRunNamingThePath) {
  static const std::string source = "tokenizer.json";
  auto errorOf = [&](const json &node) -> std::string {
    try {
      PreTokenizer::parse(JsonNode(node, source));
      return "(parsed without error)";
    } catch (const TokenizerJsonError &e) {
      return e.what();
    }
  };
  json byteLevel = {{"type", "ByteLevel"}, {"add_prefix_space", false}};
  json digits = {{"type", "Digits"}, {"individual_digits", true}};
  EXPECT_EQ(
      errorOf({{"type", "Sequence"}, {"pretokenizers", {byteLevel, digits}}}),
      "tokenizer.json: /pretokenizers/0/type: ByteLevel must be the "
      "last pre-tokenizer");
  EXPECT_EQ(errorOf(digits), "tokenizer.json: /: a ByteLevel pre-tokenizer "
                             "is required (byte-level BPE)");
  EXPECT_EQ(
      errorOf({{"type", "Sequence"},
               {"pretokenizers",
                {split({{"Regex", R"(\w+)"}}, "Isolated", false), byteLevel}}}),
      "tokenizer.json: /pretokenizers/0/pattern/Regex: regex '\\w+': "
      "unsupported escape \\w at offset 0");
}

} // namespace
