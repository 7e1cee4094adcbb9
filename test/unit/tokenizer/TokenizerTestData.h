//===- TokenizerTestData.h - The trained Cohere2 tokenizer and its oracle -===//
//
// The tokenizer.json of the trained test model and what Hugging Face
// tokenizers 0.23.2 answered for it: test/data/models/trained-cohere2/
// tokenizer_cases.json and test/data/text/trained-cohere2.tokenizer_cases.json
// (made by test/data/text/make_tokenizer_cases.py).
//
//===----------------------------------------------------------------------===//
#ifndef COHERE2C_TEST_UNIT_TOKENIZER_TOKENIZERTESTDATA_H
#define COHERE2C_TEST_UNIT_TOKENIZER_TOKENIZERTESTDATA_H

#include "text/tokenizer/Tokenizer.h"

#include <nlohmann/json.hpp>

#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string>

namespace cohere2c::text::testing {

inline std::string readTestFile(const std::string &relativePath) {
  std::string path = std::string(COHERE2C_TEST_DATA_DIR) + "/" + relativePath;
  std::ifstream in(path, std::ios::binary);
  if (!in)
    throw std::runtime_error("cannot open " + path);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

inline const std::string &trainedTokenizerJson() {
  static const std::string text =
      readTestFile("models/trained-cohere2/tokenizer.json");
  return text;
}

/// The trained tokenizer, parsed once.
inline const Tokenizer &trainedTokenizer() {
  static const std::shared_ptr<const Tokenizer> tokenizer = [] {
    auto parsed = Tokenizer::parse(trainedTokenizerJson(), "tokenizer.json");
    if (!parsed.ok())
      throw std::runtime_error(parsed.status().message());
    return *parsed;
  }();
  return *tokenizer;
}

/// The model folder's cases: [{text, ids, ids_no_special, decoded}], where
/// decoded is decode(ids_no_special, skip_special_tokens=False) (so a
/// special token written in the text stays, the BOS does not).
inline const nlohmann::json &modelCases() {
  static const nlohmann::json cases = nlohmann::json::parse(
      readTestFile("models/trained-cohere2/tokenizer_cases.json"));
  return cases;
}

/// The generated cases: {"encode": [...], "decode": [...]}.
inline const nlohmann::json &generatedCases() {
  static const nlohmann::json cases = nlohmann::json::parse(
      readTestFile("text/trained-cohere2.tokenizer_cases.json"));
  return cases;
}

} // namespace cohere2c::text::testing

#endif // COHERE2C_TEST_UNIT_TOKENIZER_TOKENIZERTESTDATA_H
