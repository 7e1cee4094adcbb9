//===- TokenizerTest.cpp - Tests of the tokenizer.json tokenizer ----------===//
//
// Every expected id and text comes from Hugging Face tokenizers 0.23.2 (the
// oracle files of TokenizerTestData.h) or from tokenizer.json itself.
//
//===----------------------------------------------------------------------===//
#include "TokenizerTestData.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <functional>
#include <thread>

using namespace cohere2c::text;
using namespace cohere2c::text::testing;
using nlohmann::json;

namespace {

std::vector<int32_t> idsOf(const json &value) {
  return value.get<std::vector<int32_t>>();
}

/// The error parse() gives for the trained tokenizer.json changed by `edit`.
std::string parseErrorAfter(const std::function<void(json &)> &edit) {
  json document = json::parse(trainedTokenizerJson());
  edit(document);
  auto parsed = Tokenizer::parse(document.dump(), "tokenizer.json");
  if (parsed.ok())
    return "(parsed without error)";
  return parsed.status().message();
}

TEST(TokenizerTest, ReproducesTheModelFolderCases) {
  const Tokenizer &tokenizer = trainedTokenizer();
  ASSERT_EQ(modelCases().size(), 20u);
  for (const json &c : modelCases()) {
    std::string text = c["text"];
    SCOPED_TRACE(text);
    auto ids = tokenizer.encode(text, /*addSpecialTokens=*/true);
    ASSERT_TRUE(ids.ok()) << ids.status().message();
    EXPECT_EQ(*ids, idsOf(c["ids"]));
    auto idsNoSpecial = tokenizer.encode(text, /*addSpecialTokens=*/false);
    ASSERT_TRUE(idsNoSpecial.ok());
    EXPECT_EQ(*idsNoSpecial, idsOf(c["ids_no_special"]));
    // "decoded" is decode(ids_no_special, skip_special_tokens=False): it
    // keeps special tokens of the text but not the BOS.
    auto decoded = tokenizer.decode(idsOf(c["ids_no_special"]), false);
    ASSERT_TRUE(decoded.ok());
    EXPECT_EQ(*decoded, c["decoded"].get<std::string>());
  }
}

TEST(TokenizerTest, ReproducesTokenizersOnGeneratedText) {
  const Tokenizer &tokenizer = trainedTokenizer();
  ASSERT_EQ(generatedCases()["tokenizers_version"], "0.23.2");
  const json &cases = generatedCases()["encode"];
  ASSERT_EQ(cases.size(), 332u);
  for (const json &c : cases) {
    std::string text = c["text"];
    SCOPED_TRACE(c["kind"].get<std::string>() + ": " + json(text).dump());
    auto ids = tokenizer.encode(text, true);
    ASSERT_TRUE(ids.ok()) << ids.status().message();
    EXPECT_EQ(*ids, idsOf(c["ids"]));
    auto idsNoSpecial = tokenizer.encode(text, false);
    ASSERT_TRUE(idsNoSpecial.ok());
    EXPECT_EQ(*idsNoSpecial, idsOf(c["ids_no_special"]));
    auto decoded = tokenizer.decode(idsOf(c["ids"]), false);
    ASSERT_TRUE(decoded.ok());
    EXPECT_EQ(*decoded, c["decoded"].get<std::string>());
    auto skipped = tokenizer.decode(idsOf(c["ids"]), true);
    ASSERT_TRUE(skipped.ok());
    EXPECT_EQ(*skipped, c["decoded_skip_special"].get<std::string>());
  }
}

TEST(TokenizerTest, DecodesRandomIdsLikeTokenizers) {
  const Tokenizer &tokenizer = trainedTokenizer();
  const json &cases = generatedCases()["decode"];
  ASSERT_EQ(cases.size(), 60u);
  for (const json &c : cases) {
    SCOPED_TRACE(c["ids"].dump());
    auto decoded = tokenizer.decode(idsOf(c["ids"]), false);
    ASSERT_TRUE(decoded.ok()) << decoded.status().message();
    EXPECT_EQ(*decoded, c["decoded"].get<std::string>());
    auto skipped = tokenizer.decode(idsOf(c["ids"]), true);
    ASSERT_TRUE(skipped.ok());
    EXPECT_EQ(*skipped, c["decoded_skip_special"].get<std::string>());
  }
}

TEST(TokenizerTest, EncodesFromManyThreadsAtOnce) {
  // A fresh tokenizer, so the threads fill its word cache together.
  auto tokenizer = Tokenizer::parse(trainedTokenizerJson(), "tokenizer.json");
  ASSERT_TRUE(tokenizer.ok());
  const json &cases = generatedCases()["encode"];
  std::vector<int> mismatches(4, 0);
  std::vector<std::thread> threads;
  for (size_t t = 0; t < mismatches.size(); ++t)
    threads.emplace_back([&, t] {
      for (int round = 0; round < 3; ++round)
        for (size_t i = t; i < cases.size() + t; ++i) {
          const json &c = cases[i % cases.size()];
          auto ids = (*tokenizer)->encode(c["text"].get<std::string>(), true);
          if (!ids.ok() || *ids != idsOf(c["ids"]))
            ++mismatches[t];
        }
    });
  for (std::thread &thread : threads)
    thread.join();
  EXPECT_EQ(mismatches, std::vector<int>(4, 0));
}

TEST(TokenizerTest, AnswersVocabQueriesFromTheFile) {
  const Tokenizer &tokenizer = trainedTokenizer();
  json document = json::parse(trainedTokenizerJson());
  int64_t idLimit = 0;
  for (const auto &[token, id] : document["model"]["vocab"].items()) {
    EXPECT_EQ(tokenizer.tokenToId(token), id.get<int32_t>()) << token;
    idLimit = std::max(idLimit, id.get<int64_t>() + 1);
  }
  for (const json &added : document["added_tokens"]) {
    auto id = added["id"].get<int32_t>();
    EXPECT_EQ(tokenizer.tokenToId(added["content"].get<std::string>()), id);
    EXPECT_EQ(tokenizer.isSpecial(id), added["special"].get<bool>());
    idLimit = std::max(idLimit, int64_t(id) + 1);
  }
  EXPECT_EQ(tokenizer.vocabSize(), idLimit);
  EXPECT_FALSE(tokenizer.tokenToId("no such token"));
  EXPECT_FALSE(tokenizer.isSpecial(*tokenizer.tokenToId("the")));
}

TEST(TokenizerTest, ReadsMergesWrittenAsStrings) {
  json document = json::parse(trainedTokenizerJson());
  json &merges = document["model"]["merges"];
  for (json &merge : merges)
    merge = merge[0].get<std::string>() + " " + merge[1].get<std::string>();
  merges.insert(merges.begin(), "#version: 0.2");
  auto tokenizer = Tokenizer::parse(document.dump(), "tokenizer.json");
  ASSERT_TRUE(tokenizer.ok()) << tokenizer.status().message();
  for (const json &c : modelCases()) {
    auto ids = (*tokenizer)->encode(c["text"].get<std::string>(), true);
    ASSERT_TRUE(ids.ok());
    EXPECT_EQ(*ids, idsOf(c["ids"]));
  }
}

TEST(TokenizerTest, RejectsUnknownComponentTypesNamingTheirPath) {
  EXPECT_EQ(parseErrorAfter([](json &d) {
              d["pre_tokenizer"]["pretokenizers"][0]["type"] = "Metaspace";
            }),
            "tokenizer.json: /pre_tokenizer/pretokenizers/0/type: "
            "unsupported pre-tokenizer 'Metaspace'");
  EXPECT_EQ(parseErrorAfter([](json &d) { d["model"]["type"] = "Unigram"; }),
            "tokenizer.json: /model/type: unsupported model 'Unigram'");
  EXPECT_EQ(parseErrorAfter([](json &d) {
              d["normalizer"] = {{"type", "Lowercase"}};
            }),
            "tokenizer.json: /normalizer/type: unsupported normalizer "
            "'Lowercase'");
  EXPECT_EQ(parseErrorAfter([](json &d) {
              d["decoder"] = {{"type", "WordPiece"}};
            }),
            "tokenizer.json: /decoder/type: unsupported decoder 'WordPiece'");
  EXPECT_EQ(parseErrorAfter([](json &d) {
              d["post_processor"] = {{"type", "BertProcessing"}};
            }),
            "tokenizer.json: /post_processor/type: unsupported "
            "post-processor 'BertProcessing'");
}

TEST(TokenizerTest, RejectsUnsupportedModelOptionsNamingTheirPath) {
  std::string message =
      parseErrorAfter([](json &d) { d["model"]["byte_fallback"] = true; });
  EXPECT_EQ(message.rfind("tokenizer.json: /model/byte_fallback: ", 0), 0u)
      << message;
  message = parseErrorAfter([](json &d) { d["model"]["dropout"] = 0.1; });
  EXPECT_EQ(message.rfind("tokenizer.json: /model/dropout: ", 0), 0u)
      << message;
  message = parseErrorAfter(
      [](json &d) { d["model"]["continuing_subword_prefix"] = "##"; });
  EXPECT_EQ(
      message.rfind("tokenizer.json: /model/continuing_subword_prefix: ", 0),
      0u)
      << message;
}

TEST(TokenizerTest, RejectsTruncatedJsonWithItsPosition) {
  const std::string &text = trainedTokenizerJson();
  std::string truncated = text.substr(0, text.size() / 2);
  auto parsed = Tokenizer::parse(truncated, "tokenizer.json");
  ASSERT_FALSE(parsed.ok());
  const std::string &message = parsed.status().message();
  // nlohmann reports the position one past the last byte read: the line
  // and column of the end of input.
  size_t lastNewline = truncated.rfind('\n');
  size_t line = std::count(truncated.begin(), truncated.end(), '\n') + 1;
  size_t column = truncated.size() -
                  (lastNewline == std::string::npos ? 0 : lastNewline + 1) + 1;
  EXPECT_EQ(message.rfind("tokenizer.json: not valid JSON: parse error at "
                          "line " +
                              std::to_string(line) + ", column " +
                              std::to_string(column) + ": ",
                          0),
            0u)
      << message;
}

TEST(TokenizerTest, RejectsJsonNestedTooDeep) {
  // 100,000 nested arrays: quoting them in a message overflowed the stack.
  std::string deep = std::string(100000, '[') + std::string(100000, ']');
  auto parsed = Tokenizer::parse("{\"model\": {\"type\": \"BPE\", "
                                 "\"dropout\": " +
                                     deep + "}}",
                                 "tokenizer.json");
  ASSERT_FALSE(parsed.ok());
  EXPECT_EQ(parsed.status().message(),
            "tokenizer.json: arrays and objects nested more than 64 levels "
            "deep (from byte 99)");
}

TEST(TokenizerTest, RejectsMissingAndMistypedFields) {
  EXPECT_EQ(parseErrorAfter([](json &d) { d.erase("model"); }),
            "tokenizer.json: /: missing field 'model'");
  EXPECT_EQ(parseErrorAfter([](json &d) { d["model"]["vocab"]["the"] = "x"; }),
            "tokenizer.json: /model/vocab/the: expected an integer, found "
            "string");
  EXPECT_EQ(
      parseErrorAfter([](json &d) { d["added_tokens"][2]["special"] = 1; }),
      "tokenizer.json: /added_tokens/2/special: expected a boolean, "
      "found integer");
}

TEST(TokenizerTest, RejectsMergesOfTokensNotInTheVocab) {
  EXPECT_EQ(parseErrorAfter([](json &d) {
              d["model"]["merges"][7] = {"not-a-token", "e"};
            }),
            "tokenizer.json: /model/merges/7: merge token 'not-a-token' is "
            "not in the vocab");
  // A pair of tokens of the vocab whose concatenation is not in it.
  json document = json::parse(trainedTokenizerJson());
  const json &vocab = document["model"]["vocab"];
  ASSERT_TRUE(vocab.contains("Q") && vocab.contains("x") &&
              !vocab.contains("Qx"));
  EXPECT_EQ(parseErrorAfter([](json &d) {
              d["model"]["merges"][3] = {"Q", "x"};
            }),
            "tokenizer.json: /model/merges/3: merge token 'Qx' is not in the "
            "vocab");
}

TEST(TokenizerTest, RejectsMergesOfAnotherShape) {
  EXPECT_EQ(parseErrorAfter([](json &d) {
              d["model"]["merges"][5] = {"a", "b", "c"};
            }),
            "tokenizer.json: /model/merges/5: expected a pair of tokens "
            "[\"a\", \"b\"] like merge 0");
  EXPECT_EQ(parseErrorAfter([](json &d) {
              json &merges = d["model"]["merges"];
              for (json &merge : merges)
                merge = merge[0].get<std::string>() + " " +
                        merge[1].get<std::string>();
              merges[4] = "a b c";
            }),
            "tokenizer.json: /model/merges/4: expected \"a b\" (two tokens, "
            "one space) like merge 0");
}

TEST(TokenizerTest, RejectsAddedTokenIdsTokenizersWouldNotAssign) {
  EXPECT_EQ(parseErrorAfter([](json &d) { d["added_tokens"][9]["id"] = 5000; }),
            "tokenizer.json: /added_tokens/9/id: '<|END_OF_TURN_TOKEN|>' has "
            "id 5000 in the file, but tokenizers assigns 4084 (its vocab id, "
            "or the next after the vocab)");
}

TEST(TokenizerTest, RejectsIdsOutsideTheVocabInDecode) {
  const Tokenizer &tokenizer = trainedTokenizer();
  auto decoded = tokenizer.decode({5, 4096}, false);
  ASSERT_FALSE(decoded.ok());
  EXPECT_EQ(decoded.status().message(),
            "decode: id 4096 is not in the vocabulary (4096 ids)");
  EXPECT_FALSE(tokenizer.decode({-1}, true).ok());
}

TEST(TokenizerTest, RejectsInvalidUtf8InEncodeNamingTheByte) {
  const Tokenizer &tokenizer = trainedTokenizer();
  auto ids = tokenizer.encode("ab\xFF"
                              "cd",
                              true);
  ASSERT_FALSE(ids.ok());
  EXPECT_EQ(ids.status().message(),
            "encode: the text is not valid UTF-8 at byte 2");
  // A character cut off at the end, an overlong encoding, a surrogate.
  EXPECT_EQ(tokenizer.encode("abc\xE2\x82", true).status().message(),
            "encode: the text is not valid UTF-8 at byte 3");
  EXPECT_EQ(tokenizer.encode("\xC0\xAF", true).status().message(),
            "encode: the text is not valid UTF-8 at byte 0");
  EXPECT_EQ(tokenizer.encode("x\xED\xA0\x80", true).status().message(),
            "encode: the text is not valid UTF-8 at byte 1");
}

} // namespace
