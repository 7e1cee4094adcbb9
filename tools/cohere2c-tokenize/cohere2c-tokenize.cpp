//===- cohere2c-tokenize.cpp - A model's tokenizer and chat template ------===//
//
//   cohere2c-tokenize MODEL_DIR_OR_ARTIFACT < requests.jsonl
//
// One JSON object per line on stdin, one JSON line out for each, like the
// Hugging Face calls:
//   {"text": T, "add_special_tokens": B}      -> {"ids": [...], "decoded": D}
//       tokenizer(T, add_special_tokens=B) (default true); D is the text the
//       ids read back as: decode(tokenizer(T, add_special_tokens=False),
//       skip_special_tokens=False), without what the post-processor adds;
//   {"ids": [...], "skip_special_tokens": B}  -> {"text": ...}
//       decode(ids, skip_special_tokens=B) (default false);
//   {"messages": [...], "add_generation_prompt": B, "documents": [...],
//    "tools": [...]}                          -> {"rendered": R, "ids": [...]}
//       apply_chat_template(...) (B default false) and the ids of R with no
//       special tokens added (the template writes the BOS).
// A line that fails gives {"error": ...} on stdout and the same message on
// stderr, and the tool goes on; its exit status is then 1. A model whose
// text files do not load is an error before any line is read.
//
//===----------------------------------------------------------------------===//

#include "CommandLine.h"
#include "ModelText.h"
#include "Support/Json.h"

#include <nlohmann/json.hpp>

#include <iostream>

using namespace cohere2c;
using json = nlohmann::ordered_json;

namespace {

constexpr const char *kTool = "cohere2c-tokenize";

/// `field` of `request` if it is a boolean, else `fallback`; an error when
/// it is present with another type.
StatusOr<bool> flag(const json &request, const char *field, bool fallback) {
  if (!request.contains(field))
    return fallback;
  if (!request[field].is_boolean())
    return Status::error(std::string(field) + " must be true or false");
  return request[field].get<bool>();
}

StatusOr<json> encodeText(const ModelText &model, const json &request) {
  if (!request["text"].is_string())
    return Status::error("text must be a string");
  auto special = flag(request, "add_special_tokens", true);
  if (!special.ok())
    return special.status();
  const std::string &text = request["text"].get_ref<const std::string &>();
  auto ids = model.encode(text, *special);
  if (!ids.ok())
    return ids.status();
  auto plain = *special ? model.encode(text, false) : ids;
  if (!plain.ok())
    return plain.status();
  auto decoded = model.decode(*plain, /*skipSpecialTokens=*/false);
  if (!decoded.ok())
    return decoded.status();
  return json{{"ids", *ids}, {"decoded", *decoded}};
}

StatusOr<json> decodeIds(const ModelText &model, const json &request) {
  if (!request["ids"].is_array())
    return Status::error("ids must be an array of token ids");
  std::vector<int32_t> ids;
  for (const json &id : request["ids"]) {
    if (!id.is_number_integer() || id.get<int64_t>() < 0 ||
        id.get<int64_t>() > INT32_MAX)
      return Status::error("ids must be an array of token ids, found " +
                           jsonExcerpt(id));
    ids.push_back(id.get<int32_t>());
  }
  auto skip = flag(request, "skip_special_tokens", false);
  if (!skip.ok())
    return skip.status();
  auto decoded = model.decode(ids, *skip);
  if (!decoded.ok())
    return decoded.status();
  return json{{"text", *decoded}};
}

StatusOr<json> renderChat(const ModelText &model, const json &request) {
  auto generationPrompt = flag(request, "add_generation_prompt", false);
  if (!generationPrompt.ok())
    return generationPrompt.status();
  auto rendered = model.renderChat(request, *generationPrompt);
  if (!rendered.ok())
    return rendered.status();
  auto ids = model.encode(*rendered, /*addSpecialTokens=*/false);
  if (!ids.ok())
    return ids.status();
  return json{{"rendered", *rendered}, {"ids", *ids}};
}

StatusOr<json> answer(const ModelText &model, const std::string &line) {
  // Messages start with the line number, which main() adds.
  StatusOr<json> parsed = parseJson<json>(line, "");
  if (!parsed.ok())
    return parsed.status();
  const json &request = *parsed;
  if (!request.is_object())
    return Status::error("not a JSON object");
  int kinds = request.contains("text") + request.contains("ids") +
              request.contains("messages");
  if (kinds != 1)
    return Status::error("give exactly one of text, ids and messages");
  // A chat's other fields are its template's variables; text and ids take
  // only their flag, so that a misspelt one is not silently ignored.
  const char *flagOf = request.contains("text")  ? "add_special_tokens"
                       : request.contains("ids") ? "skip_special_tokens"
                                                 : nullptr;
  if (flagOf)
    for (const auto &[key, value] : request.items())
      if (key != "text" && key != "ids" && key != flagOf)
        return Status::error("unknown field " + jsonExcerpt(json(key)) + " (with " +
                             (request.contains("text") ? "text" : "ids") + ": " + flagOf +
                             ")");
  if (request.contains("text"))
    return encodeText(model, request);
  if (request.contains("ids"))
    return decodeIds(model, request);
  return renderChat(model, request);
}

} // namespace

int main(int argc, char **argv) {
  CLI::App app{
      "cohere2c-tokenize: a model's tokenizer and chat template, JSON lines on "
      "stdin, one JSON line out each.\n"
      "  echo '{\"text\": \"Hello\"}' | cohere2c-tokenize model.so"};
  std::string model;
  app.add_option("model", model,
                 "checkpoint folder (tokenizer.json, ...) or OUT.so")
      ->required();
  if (std::optional<int> exit = parseCommandLine(app, argc, argv, kTool))
    return *exit;
  auto text = ModelText::open(model);
  if (!text.ok())
    return fail(kTool, text.status().message());
  int status = 0;
  std::string line;
  for (int lineNo = 1; std::getline(std::cin, line); ++lineNo) {
    auto out = answer(*text, line);
    if (out.ok()) {
      std::cout << out->dump(-1, ' ', false, json::error_handler_t::replace)
                << "\n";
      continue;
    }
    std::string message =
        "line " + std::to_string(lineNo) + ": " + out.status().message();
    status = fail(kTool, message); // and on to the next line
    std::cout << json{{"error", message}}.dump(-1, ' ', false,
                                               json::error_handler_t::replace)
              << "\n";
  }
  return exitAfterStdout(kTool, status);
}
