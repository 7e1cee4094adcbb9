//===- ModelText.cpp ------------------------------------------------------===//

#include "ModelText.h"

namespace cohere2c {

Status statusOf(cohere2c_status_t status) {
  std::optional<std::string> error = takeError(status);
  return error ? Status::error(*error) : Status::success();
}

namespace {

/// Takes the ids a C API call allocated.
std::vector<int32_t> takeIds(int32_t *ids, size_t count) {
  std::vector<int32_t> taken(ids, ids + count);
  cohere2c_free(ids);
  return taken;
}

/// Takes the text a C API call allocated.
std::string takeText(char *text, size_t length) {
  std::string taken(text, length);
  cohere2c_free(text);
  return taken;
}

/// `chat` as JSON text for the C API.
StatusOr<std::string> chatJson(const nlohmann::ordered_json &chat) {
  try {
    return chat.dump();
  } catch (const nlohmann::json::type_error &) {
    // Only a message given on the command line can hold such bytes: JSON
    // files are checked as they are parsed.
    return Status::error("the chat is not valid UTF-8");
  }
}

} // namespace

StatusOr<ModelText> ModelText::open(const std::string &path) {
  cohere2c_text_t *text = nullptr;
  if (Status s = statusOf(cohere2c_text_open(path.c_str(), &text)); !s.ok())
    return s;
  return ModelText(TextHandle(text));
}

StatusOr<ModelText> ModelText::of(const cohere2c_artifact_t *artifact) {
  cohere2c_text_t *text = nullptr;
  if (Status s = statusOf(cohere2c_artifact_text(artifact, &text)); !s.ok())
    return s;
  return ModelText(TextHandle(text));
}

StatusOr<std::vector<int32_t>> ModelText::encode(std::string_view text,
                                                 bool addSpecialTokens) const {
  int32_t *ids = nullptr;
  size_t count = 0;
  if (Status s =
          statusOf(cohere2c_text_encode(text_.get(), text.data(), text.size(),
                                        addSpecialTokens, &ids, &count));
      !s.ok())
    return s;
  return takeIds(ids, count);
}

StatusOr<std::string> ModelText::decode(const std::vector<int32_t> &ids,
                                        bool skipSpecialTokens) const {
  char *text = nullptr;
  size_t length = 0;
  if (Status s =
          statusOf(cohere2c_text_decode(text_.get(), ids.data(), ids.size(),
                                        skipSpecialTokens, &text, &length));
      !s.ok())
    return s;
  return takeText(text, length);
}

StatusOr<std::string> ModelText::renderChat(const nlohmann::ordered_json &chat,
                                            bool addGenerationPrompt) const {
  StatusOr<std::string> json = chatJson(chat);
  if (!json.ok())
    return json.status();
  char *text = nullptr;
  size_t length = 0;
  if (Status s = statusOf(cohere2c_text_render_chat(
          text_.get(), json->c_str(), addGenerationPrompt, &text, &length));
      !s.ok())
    return s;
  return takeText(text, length);
}

StatusOr<std::vector<int32_t>>
ModelText::encodeChat(const nlohmann::ordered_json &chat,
                      bool addGenerationPrompt) const {
  StatusOr<std::string> json = chatJson(chat);
  if (!json.ok())
    return json.status();
  int32_t *ids = nullptr;
  size_t count = 0;
  if (Status s = statusOf(cohere2c_text_encode_chat(
          text_.get(), json->c_str(), addGenerationPrompt, &ids, &count));
      !s.ok())
    return s;
  return takeIds(ids, count);
}

} // namespace cohere2c
