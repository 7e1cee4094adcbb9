//===- TokenizeTextFuzz.cpp - Fuzzes encode and decode of a real tokenizer -===//
//
// The trained test model's tokenizer.json (byte-level BPE, the GPT-2 regex,
// added tokens) encodes the input as text; the input's bytes, read as
// little-endian int32 ids, are decoded (ids outside the vocab are an
// error). The ids encode gives lie in the vocab and decode.
//
//===----------------------------------------------------------------------===//

#include "FuzzInput.h"
#include "text/tokenizer/Tokenizer.h"

#include <cstring>
#include <fstream>
#include <sstream>

using namespace cohere2c;
using namespace cohere2c::text;

namespace {

const Tokenizer &trainedTokenizer() {
  static std::shared_ptr<const Tokenizer> tokenizer = [] {
    std::string path =
        COHERE2C_TEST_DATA_DIR "/models/trained-cohere2/tokenizer.json";
    std::ifstream in(path, std::ios::binary);
    std::stringstream text;
    text << in.rdbuf();
    auto parsed = Tokenizer::parse(text.str(), path);
    if (!parsed.ok()) {
      std::fprintf(stderr, "%s\n", parsed.status().message().c_str());
      std::abort();
    }
    return *parsed;
  }();
  return *tokenizer;
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  const Tokenizer &t = trainedTokenizer();
  std::string_view text((const char *)data, size);
  for (bool special : {true, false}) {
    auto ids = t.encode(text, special);
    if (!ids.ok())
      continue;
    for (int32_t id : *ids)
      fuzz::require(id >= 0 && id < t.vocabSize(), "encode gave an id outside the vocab");
    fuzz::require(t.decode(*ids, false).ok(), "decode refused ids encode gave");
  }
  std::vector<int32_t> ids(size / sizeof(int32_t));
  if (!ids.empty())
    std::memcpy(ids.data(), data, ids.size() * sizeof(int32_t));
  for (bool skip : {true, false})
    (void)t.decode(ids, skip);
  return 0;
}
