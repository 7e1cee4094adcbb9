//===- ModelText.cpp ------------------------------------------------------===//

#include "text/ModelText.h"

#include "Support/Json.h"
#include "text/TextCheck.h"

#include <set>

namespace cohere2c::text {

namespace {

using json = nlohmann::ordered_json;

/// `text` parsed as a JSON object, or an error naming `file`.
StatusOr<json> parseObject(const std::string &text, const std::string &file) {
  StatusOr<json> value = parseJson<json>(text, file);
  if (value.ok() && !value->is_object())
    return Status::error(file + ": not a JSON object");
  return value;
}

/// The template text of tokenizer_config.json's `chat_template`: a string,
/// or a list of {"name", "template"} of which the one named "default" (as
/// transformers picks when no template is named).
StatusOr<std::string> configTemplate(const json &config,
                                     const std::string &file) {
  const json &field = config["chat_template"];
  if (field.is_string())
    return field.get<std::string>();
  if (!field.is_array())
    return Status::error(file +
                         ": chat_template must be a string or a list of "
                         "{\"name\", \"template\"}, found " +
                         std::string(field.type_name()));
  for (const json &named : field)
    if (named.is_object() && named.value("name", json()) == "default" &&
        named.contains("template") && named["template"].is_string())
      return named["template"].get<std::string>();
  return Status::error(file +
                       ": chat_template lists no template named 'default'");
}

/// bos_token, eos_token, ...: the fields ending in "_token" whose value is a
/// string or an added token ({"content": ...}), as transformers passes them
/// to the template. transformers' own special tokens must have such a value
/// (or null): another one would drop, say, the template's BOS silently.
StatusOr<json> specialTokensOf(const json &config, const std::string &file) {
  static const std::set<std::string> special = {
      "bos_token", "eos_token", "unk_token", "sep_token",
      "pad_token", "cls_token", "mask_token"};
  json tokens = json::object();
  for (const auto &[key, value] : config.items()) {
    if (key.size() < 6 || key.compare(key.size() - 6, 6, "_token") != 0)
      continue;
    if (value.is_string())
      tokens[key] = value;
    else if (value.is_object() && value.contains("content") &&
             value["content"].is_string())
      tokens[key] = value["content"];
    else if (special.count(key) && !value.is_null())
      return Status::error(
          file + ": " + key +
          " must be a string or {\"content\": string}, found " +
          jsonExcerpt(value));
  }
  return tokens;
}

/// generation_config.json's eos_token_id, below the tokenizer's
/// `vocabSize`; absent or null leaves `ids` as they are.
Status readEosIds(const json &config, const std::string &file,
                  int64_t vocabSize, std::vector<int64_t> &ids) {
  if (!config.contains("eos_token_id") || config["eos_token_id"].is_null())
    return Status::success();
  StatusOr<std::vector<int64_t>> read =
      parseTokenIds(config["eos_token_id"], "eos_token_id", vocabSize,
                    "the tokenizer's vocabulary");
  if (!read.ok())
    return Status::error(file + ": " + read.status().message());
  ids = *read;
  return Status::success();
}

/// Checks the shape of a chat before the template sees it.
Status checkChat(const json &chat) {
  if (!chat.is_object() || !chat.contains("messages") ||
      !chat["messages"].is_array())
    return Status::error("messages must be an array of messages");
  const json &messages = chat["messages"];
  if (messages.empty())
    return Status::error("messages must not be empty");
  for (size_t i = 0; i < messages.size(); ++i) {
    const json &m = messages[i];
    std::string where = "messages[" + std::to_string(i) + "]";
    if (!m.is_object() || !m.contains("role") || !m["role"].is_string())
      return Status::error(where + " must be an object with a string role");
    if ((!m.contains("content") || m["content"].is_null()) &&
        messageNeedsText(m))
      return Status::error(where + ".content is missing (a " +
                           m["role"].get<std::string>() +
                           " message needs its text)");
  }
  for (const char *field : {"documents", "tools"})
    if (chat.contains(field) && !chat[field].is_null() &&
        !chat[field].is_array())
      return Status::error(std::string(field) + " must be an array");
  return Status::success();
}

} // namespace

StatusOr<std::unique_ptr<ModelText>>
ModelText::create(const TextFiles &files, const std::string &source,
                  const std::vector<int64_t> &configEosIds) {
  if (!files.hasTokenizer())
    return Status::error(
        source + ": no tokenizer.json (an artifact compiled from a config "
                 "alone, or a checkpoint without one): text needs it");
  std::unique_ptr<ModelText> text(new ModelText());
  auto tokenizer =
      Tokenizer::parse(files.tokenizerJson, source + "/tokenizer.json");
  if (!tokenizer.ok())
    return tokenizer.status();
  text->tokenizer_ = *tokenizer;

  std::string templateName = source + "/chat_template.jinja";
  std::string templateText = files.chatTemplate;
  if (!files.tokenizerConfigJson.empty()) {
    std::string file = source + "/tokenizer_config.json";
    auto config = parseObject(files.tokenizerConfigJson, file);
    if (!config.ok())
      return config.status();
    auto special = specialTokensOf(*config, file);
    if (!special.ok())
      return special.status();
    text->specialTokens_ = std::move(*special);
    if (templateText.empty() && config->contains("chat_template")) {
      auto fromConfig = configTemplate(*config, file);
      if (!fromConfig.ok())
        return fromConfig.status();
      templateText = *fromConfig;
      templateName = file + ": chat_template";
    }
  }
  if (!templateText.empty()) {
    auto parsed = ChatTemplate::parse(templateText, templateName);
    if (!parsed.ok())
      return parsed.status();
    text->chatTemplate_ = *parsed;
  }

  text->eosTokenIds_ = configEosIds;
  if (!files.generationConfigJson.empty()) {
    std::string file = source + "/generation_config.json";
    auto config = parseObject(files.generationConfigJson, file);
    if (!config.ok())
      return config.status();
    Status eos = readEosIds(*config, file, text->tokenizer_->vocabSize(),
                            text->eosTokenIds_);
    if (!eos.ok())
      return eos;
  }
  return text;
}

StatusOr<std::vector<int32_t>>
ModelText::encodePrompt(std::string_view text) const {
  return tokenizer_->encode(text, /*addSpecialTokens=*/true);
}

StatusOr<std::string> ModelText::renderChat(const json &chat,
                                            bool addGenerationPrompt) const {
  if (!chatTemplate_)
    return Status::error(
        "the model has no chat template (no chat_template.jinja and no "
        "chat_template in tokenizer_config.json)");
  Status shape = checkChat(chat);
  if (!shape.ok())
    return shape;
  json context = specialTokens_;
  context["messages"] = chat["messages"];
  context["add_generation_prompt"] = addGenerationPrompt;
  // transformers passes both, None when not given.
  context["documents"] = chat.value("documents", json());
  context["tools"] = chat.value("tools", json());
  return chatTemplate_->render(context);
}

StatusOr<std::vector<int32_t>>
ModelText::encodeChat(const json &chat, bool addGenerationPrompt) const {
  auto rendered = renderChat(chat, addGenerationPrompt);
  if (!rendered.ok())
    return rendered.status();
  return tokenizer_->encode(*rendered, /*addSpecialTokens=*/false);
}

bool messageNeedsText(const json &message) {
  return message["role"] != "assistant";
}

Status checkTextFiles(const TextFiles &files, const std::string &source) {
  if (!files.hasTokenizer())
    return Status::success();
  auto text = ModelText::create(files, source, {});
  return text.ok() ? Status::success() : text.status();
}

} // namespace cohere2c::text
