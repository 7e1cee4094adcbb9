//===- ChatTemplateFuzz.cpp - Fuzzes chat templates (ChatTemplate) --------===//
//
// The input is a template, parsed and rendered with a chat like the ones
// the tools and the server pass (messages of each role, documents, tools,
// the special tokens). Any template is a parse error, a render error or a
// text; the interpreter's limits (Interpreter.h) bound time and memory.
//
//===----------------------------------------------------------------------===//

#include "FuzzInput.h"
#include "text/chat_template/ChatTemplate.h"

using namespace cohere2c;
using namespace cohere2c::text;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  static const nlohmann::ordered_json context = nlohmann::ordered_json::parse(R"({
    "messages": [
      {"role": "system", "content": "Be brief."},
      {"role": "user", "content": "What is cruft?"},
      {"role": "assistant", "content": "Old code.", "tool_calls": [
        {"id": "0", "type": "function",
         "function": {"name": "search", "arguments": {"q": "cruft", "n": 2}}}]},
      {"role": "tool", "tool_call_id": "0", "content": [{"text": "x"}]},
      {"role": "user", "content": "\u00e9\u4e2d \ud83d\ude00"}],
    "documents": [{"title": "T", "text": "D"}],
    "tools": [{"type": "function", "function": {"name": "search",
      "parameters": {"type": "object", "properties": {"q": {"type": "string"}}}}}],
    "add_generation_prompt": true,
    "bos_token": "<BOS_TOKEN>", "eos_token": "<|END_OF_TURN_TOKEN|>"
  })");
  auto parsed = ChatTemplate::parse(std::string_view((const char *)data, size),
                                    "chat_template.jinja");
  if (!parsed.ok())
    return 0;
  (void)(*parsed)->render(context);
  return 0;
}
