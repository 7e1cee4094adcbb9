//===- TokenizerJsonFuzz.cpp - Fuzzes tokenizer.json (Tokenizer::parse) ---===//
//
// Any bytes are an error or a tokenizer that encodes a fixed text and
// decodes its ids and its first ids without failing on ids it gave out.
//
//===----------------------------------------------------------------------===//

#include "FuzzInput.h"
#include "text/tokenizer/Tokenizer.h"

using namespace cohere2c;
using namespace cohere2c::text;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  auto tokenizer = Tokenizer::parse(
      std::string_view((const char *)data, size), "tokenizer.json");
  if (!tokenizer.ok())
    return 0;
  const Tokenizer &t = **tokenizer;
  auto ids = t.encode("Hello, world! 123 <|START_OF_TURN_TOKEN|> \xc3\xa9", true);
  if (ids.ok()) {
    for (int32_t id : *ids)
      fuzz::require(id >= 0 && id < t.vocabSize(), "encode gave an id outside the vocab");
    fuzz::require(t.decode(*ids, false).ok(), "decode refused ids encode gave");
  }
  std::vector<int32_t> first;
  for (int32_t id = 0; id < t.vocabSize() && id < 64; ++id)
    first.push_back(id);
  (void)t.decode(first, true);
  return 0;
}
