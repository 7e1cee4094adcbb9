//===- HttpRequestFuzz.cpp - Fuzzes the server's request bodies -----------===//
//
// The input is the body of a POST to /v1/chat/completions and to
// /v1/completions, parsed with the trained test model's tokenizer and chat
// template as the server does (OpenAIRequest.h). Any body is an ApiError
// (400 naming the field) or a request whose prompts hold ids of the vocab.
//
//===----------------------------------------------------------------------===//

#include "FuzzInput.h"
#include "serve/OpenAIRequest.h"

using namespace cohere2c;
using namespace cohere2c::serve;

namespace {

const text::ModelText &trainedText() {
  static std::unique_ptr<text::ModelText> text = [] {
    std::string dir = COHERE2C_TEST_DATA_DIR "/models/trained-cohere2";
    auto files = TextFiles::readCheckpoint(dir);
    if (!files.ok())
      std::abort();
    auto created = text::ModelText::create(*files, dir, {3});
    if (!created.ok()) {
      std::fprintf(stderr, "%s\n", created.status().message().c_str());
      std::abort();
    }
    return std::move(*created);
  }();
  return *text;
}

void checkPrompts(const CompletionSpec &spec, int64_t vocab) {
  for (const auto &prompt : spec.prompts)
    for (int32_t id : prompt)
      fuzz::require(id >= 0 && id < vocab, "a prompt id outside the vocab");
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  const text::ModelText &text = trainedText();
  nlohmann::ordered_json body;
  if (parseBody(std::string((const char *)data, size), body))
    return 0;
  int64_t vocab = text.tokenizer().vocabSize();
  CompletionSpec chat;
  if (!parseChatRequest(body, text, chat))
    checkPrompts(chat, vocab);
  CompletionSpec completion;
  if (!parseCompletionRequest(body, text, vocab, completion))
    checkPrompts(completion, vocab);
  return 0;
}
