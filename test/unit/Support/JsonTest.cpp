//===- JsonTest.cpp - Tests for bounded JSON parsing ----------------------===//
//
// Expected depths and offsets are counted by hand: the document's own array
// or object is level 1, and a message names the byte of the bracket that
// opens level 65.
//
//===----------------------------------------------------------------------===//
#include "Support/Json.h"

#include <gtest/gtest.h>

using namespace cohere2c;
using nlohmann::json;

namespace {

std::string nested(int depth) {
  return std::string(depth, '[') + std::string(depth, ']');
}

TEST(JsonTest, ReadsNestingAtTheLimit) {
  StatusOr<json> value = parseJson(nested(kMaxJsonDepth), "x.json");
  ASSERT_TRUE(value.ok()) << value.status().message();
  EXPECT_EQ(value->dump(), nested(kMaxJsonDepth));
}

TEST(JsonTest, RefusesNestingBeyondTheLimit) {
  StatusOr<json> value = parseJson(nested(kMaxJsonDepth + 1), "x.json");
  ASSERT_FALSE(value.ok());
  EXPECT_EQ(value.status().message(),
            "x.json: arrays and objects nested more than 64 levels deep "
            "(from byte 64)");
}

TEST(JsonTest, RefusesAHundredThousandLevels) {
  // 200 KB: nlohmann's serializer would recurse 100,000 times on it.
  StatusOr<nlohmann::ordered_json> value = parseJson<nlohmann::ordered_json>(
      "{\"a\": " + nested(100000) + "}", "deep.json");
  ASSERT_FALSE(value.ok());
  EXPECT_EQ(value.status().message(),
            "deep.json: arrays and objects nested more than 64 levels deep "
            "(from byte 69)");
}

TEST(JsonTest, CountsObjectsAndArraysAlike) {
  std::string text;
  for (int i = 0; i < 40; ++i)
    text += "{\"k\": [";
  text += "1" + std::string(40, ']') + std::string(40, '}');
  // Level 65 is the 33rd object, 32 * 7 bytes in.
  StatusOr<json> value = parseJson(text, "mixed.json");
  ASSERT_FALSE(value.ok());
  EXPECT_EQ(value.status().message(),
            "mixed.json: arrays and objects nested more than 64 levels deep "
            "(from byte 224)");
}

TEST(JsonTest, IgnoresBracketsInStrings) {
  std::string brackets(1000, '[');
  std::string text = "{\"a\": \"" + brackets + "\", \"b\": \"\\\"" + brackets +
                     "\\\\\", \"c\": [\"]]]\"]}";
  StatusOr<json> value = parseJson(text, "strings.json");
  ASSERT_TRUE(value.ok()) << value.status().message();
  EXPECT_EQ((*value)["a"], brackets);
  EXPECT_EQ((*value)["b"], "\"" + brackets + "\\");
  EXPECT_EQ((*value)["c"][0], "]]]");
}

// nlohmann alone stops at a NUL byte and takes what came before as the
// document: {"a": 1} followed by anything.
TEST(JsonTest, RefusesANulByte) {
  std::string text("{\"a\": 1}\0{\"garbage", 18);
  StatusOr<json> value = parseJson(text, "nul.json");
  ASSERT_FALSE(value.ok());
  EXPECT_EQ(value.status().message(), "nul.json: not valid JSON: a NUL byte at byte 8");
}

TEST(JsonTest, ReportsWhereJsonIsInvalid) {
  StatusOr<json> value = parseJson("{\"a\": 1,\n}", "bad.json");
  ASSERT_FALSE(value.ok());
  EXPECT_EQ(value.status().message(),
            "bad.json: not valid JSON: parse error at line 2, column 1: "
            "syntax error while parsing object key - unexpected '}'; "
            "expected string literal");
}

TEST(JsonTest, QuotesAtMost80BytesOfWhatTheParserLastRead) {
  // The parser's message carries the whole token it stopped in.
  StatusOr<json> value =
      parseJson("[" + std::string(100000, '1') + ".]", "number.json");
  ASSERT_FALSE(value.ok());
  EXPECT_EQ(value.status().message(),
            "number.json: not valid JSON: parse error at line 1, column "
            "100003: syntax error while parsing value - invalid number; "
            "expected digit after '.'; last read: '" +
                std::string(80, '1') + "...");
}

TEST(JsonTest, OmitsAnEmptySource) {
  StatusOr<json> value = parseJson(nested(65), "");
  ASSERT_FALSE(value.ok());
  EXPECT_EQ(value.status().message(),
            "arrays and objects nested more than 64 levels deep (from byte "
            "64)");
}

TEST(JsonTest, FindsAKeyGivenTwice) {
  EXPECT_FALSE(findDuplicateKey(R"({"a": 1, "b": {"a": 2}, "c": [{"a": 3}]})"));
  std::optional<DuplicateKey> top =
      findDuplicateKey(R"({"a": 1, "b": 2, "a": 3})");
  ASSERT_TRUE(top);
  EXPECT_EQ(top->key, "a");
  EXPECT_EQ(top->pointer, "/a");
  std::optional<DuplicateKey> inArray =
      findDuplicateKey(R"({"x": [{"k": 1}, 7, {"k": 2, "k": 3}]})");
  ASSERT_TRUE(inArray);
  EXPECT_EQ(inArray->pointer, "/x/2/k");
  // RFC 6901 escapes: '~' is "~0", '/' is "~1".
  std::optional<DuplicateKey> escaped =
      findDuplicateKey(R"({"a/b": {"~": 1, "~": 2}})");
  ASSERT_TRUE(escaped);
  EXPECT_EQ(escaped->pointer, "/a~1b/~0");
  std::optional<DuplicateKey> empty = findDuplicateKey(R"({"": 1, "": 2})");
  ASSERT_TRUE(empty);
  EXPECT_EQ(empty->key, "");
  EXPECT_EQ(empty->pointer, "/");
}

TEST(JsonTest, ParsesTokenIdsAsHuggingFaceWritesThem) {
  auto ids = [](const char *text) {
    return parseTokenIds(json::parse(text), "eos_token_id", 100,
                         "the vocabulary");
  };
  EXPECT_EQ(*ids("3"), std::vector<int64_t>{3});
  EXPECT_EQ(*ids("[3, 99]"), (std::vector<int64_t>{3, 99}));
  EXPECT_TRUE(ids("null")->empty());
  EXPECT_EQ(ids("[3, 100]").status().message(),
            "eos_token_id 100 is outside the vocabulary [0, 100)");
  for (const char *bad :
       {"-1", "2.5", "\"3\"", "[[3]]", "18446744073709551615"})
    EXPECT_EQ(
        ids(bad).status().message(),
        std::string("eos_token_id must be an id or a list of ids, found ") +
            bad)
        << bad;
}

TEST(JsonTest, ExcerptKeepsShortTextAndCutsLongText) {
  EXPECT_EQ(excerpt("short"), "short");
  EXPECT_EQ(excerpt(std::string(80, 'x')), std::string(80, 'x'));
  EXPECT_EQ(excerpt(std::string(81, 'x')), std::string(80, 'x') + "...");
  EXPECT_EQ(jsonExcerpt(json(std::string(100000, 'y'))),
            "\"" + std::string(79, 'y') + "...");
}

TEST(JsonTest, ExcerptCutsBetweenUtf8Characters) {
  // "é" is 2 bytes: 79 ASCII bytes then "é" would cut it in half at 80.
  std::string text = std::string(79, 'x') + "\xC3\xA9" + "tail";
  EXPECT_EQ(excerpt(text), std::string(79, 'x') + "...");
  std::string euros;
  for (int i = 0; i < 40; ++i)
    euros += "\xE2\x82\xAC"; // 3 bytes each: 26 fit in 80
  EXPECT_EQ(excerpt(euros).size(), 26 * 3 + 3);
}

TEST(JsonTest, ExcerptQuotesInvalidUtf8WithoutFailing) {
  json value = std::string("a\xFF") + "b";
  EXPECT_EQ(jsonExcerpt(value), std::string("\"a\xEF\xBF\xBD") + "b\"");
}

} // namespace
