//===- OpenAIRequest.cpp --------------------------------------------------===//

#include "serve/OpenAIRequest.h"
#include "Support/Json.h"

#include <cmath>

namespace cohere2c::serve {

using json = nlohmann::ordered_json;

json ApiError::body() const {
  const char *type = status == 401   ? "authentication_error"
                     : status == 404 ? "not_found_error"
                     : status >= 500 ? "server_error"
                                     : "invalid_request_error";
  return {{"error",
           {{"message", message},
            {"type", type},
            {"param", param.empty() ? json() : json(param)},
            {"code", status}}}};
}

namespace {

/// Reads the optional fields common to both endpoints.
class Fields {
public:
  Fields(const json &body, CompletionSpec &spec) : body(body), spec(spec) {}

  std::optional<ApiError> common() {
    for (auto check : {&Fields::maxTokens, &Fields::sampling, &Fields::stop,
                       &Fields::flags, &Fields::choices, &Fields::unsupported})
      if (auto error = (this->*check)())
        return error;
    return std::nullopt;
  }

  /// `name` if present and not null, else nullptr.
  const json *get(const char *name) const {
    auto found = body.find(name);
    return found == body.end() || found->is_null() ? nullptr : &*found;
  }

  std::optional<ApiError> integer(const char *name, int64_t low, int64_t high,
                                  std::optional<int64_t> &out) const {
    const json *v = get(name);
    if (!v)
      return std::nullopt;
    if (!v->is_number_integer() || v->get<int64_t>() < low ||
        v->get<int64_t>() > high ||
        (v->is_number_unsigned() && v->get<uint64_t>() > (uint64_t)INT64_MAX))
      return ApiError::badRequest(
          std::string(name) + " must be an integer in [" + std::to_string(low) +
              ", " + std::to_string(high) + "], found " + jsonExcerpt(*v),
          name);
    out = v->get<int64_t>();
    return std::nullopt;
  }

  std::optional<ApiError> number(const char *name, double low, double high,
                                 bool openLow, double &out) const {
    const json *v = get(name);
    if (!v)
      return std::nullopt;
    double x = v->is_number() ? v->get<double>() : NAN;
    if (!std::isfinite(x) || x < low || x > high || (openLow && x == low))
      return ApiError::badRequest(
          std::string(name) + " must be a number in " + (openLow ? "(" : "[") +
              std::to_string(low) + ", " + std::to_string(high) + "], found " +
              jsonExcerpt(*v),
          name);
    out = x;
    return std::nullopt;
  }

  std::optional<ApiError> boolean(const char *name, bool &out) const {
    const json *v = get(name);
    if (!v)
      return std::nullopt;
    if (!v->is_boolean())
      return ApiError::badRequest(
          std::string(name) + " must be true or false, found " +
              jsonExcerpt(*v),
          name);
    out = v->get<bool>();
    return std::nullopt;
  }

private:
  std::optional<ApiError> maxTokens() {
    for (const char *name : {"max_tokens", "max_completion_tokens"})
      if (auto error = integer(name, 1, INT64_MAX, spec.maxTokens))
        return error;
    return std::nullopt;
  }

  std::optional<ApiError> sampling() {
    if (auto error = number("temperature", 0, 2, false, spec.temperature))
      return error;
    if (auto error = number("top_p", 0, 1, true, spec.topP))
      return error;
    std::optional<int64_t> topK, seed;
    // vLLM: top_k -1 (or 0) keeps every token.
    if (auto error = integer("top_k", -1, INT64_MAX, topK))
      return error;
    spec.topK = topK && *topK > 0 ? *topK : 0;
    if (auto error = integer("seed", INT64_MIN, INT64_MAX, seed))
      return error;
    if (seed)
      spec.seed = (uint64_t)*seed;
    return std::nullopt;
  }

  std::optional<ApiError> stop() {
    const json *v = get("stop");
    if (!v)
      return std::nullopt;
    json list = v->is_array() ? *v : json::array({*v});
    if (list.size() > 16)
      return ApiError::badRequest("stop may list at most 16 strings", "stop");
    for (const json &s : list) {
      if (!s.is_string() || s.get<std::string>().empty())
        return ApiError::badRequest(
            "stop must be a non-empty string or a list of them, found " +
                jsonExcerpt(*v),
            "stop");
      spec.stop.push_back(s.get<std::string>());
    }
    return std::nullopt;
  }

  std::optional<ApiError> flags() {
    if (auto error = boolean("stream", spec.stream))
      return error;
    if (auto error = boolean("ignore_eos", spec.ignoreEos))
      return error;
    if (const json *options = get("stream_options")) {
      if (!options->is_object())
        return ApiError::badRequest("stream_options must be an object",
                                    "stream_options");
      Fields inner(*options, spec);
      if (auto error = inner.boolean("include_usage", spec.includeUsage))
        return error;
    }
    return std::nullopt;
  }

  std::optional<ApiError> choices() {
    std::optional<int64_t> n;
    if (auto error = integer("n", 1, 1, n))
      return ApiError::badRequest("n must be 1 (one choice per prompt)", "n");
    return std::nullopt;
  }

  /// Fields that would change the answer and that the engine does not
  /// implement: refused unless absent, null or their neutral value, never
  /// silently ignored.
  std::optional<ApiError> unsupported() {
    static const std::pair<const char *, json> kNeutral[] = {
        {"logit_bias", json::object()},
        {"frequency_penalty", 0},
        {"presence_penalty", 0},
        {"repetition_penalty", 1},
        {"min_tokens", 0},
        {"best_of", 1},
        {"suffix", ""},
        {"response_format", {{"type", "text"}}},
        {"tool_choice", "auto"}};
    for (const auto &[name, neutral] : kNeutral)
      if (const json *v = get(name); v && *v != neutral)
        return ApiError::badRequest(std::string(name) + " is not supported",
                                    name);
    return std::nullopt;
  }

  const json &body;
  CompletionSpec &spec;
};

/// OpenAI's message content: a string, or a list of parts of which the
/// text ones are joined (as vLLM does for text-only models).
std::optional<ApiError> flattenContent(json &message, size_t index) {
  json &content = message["content"];
  std::string where = "messages[" + std::to_string(index) + "].content";
  if (content.is_null() && text::messageNeedsText(message))
    return ApiError::badRequest(where + " is missing (a " +
                                    message["role"].get<std::string>() +
                                    " message needs its text)",
                                where);
  if (content.is_string() || content.is_null())
    return std::nullopt;
  if (!content.is_array())
    return ApiError::badRequest(
        where + " must be a string or a list of text parts", where);
  std::string text;
  for (const json &part : content) {
    if (!part.is_object() || part.value("type", "") != "text" ||
        !part.contains("text") || !part["text"].is_string())
      return ApiError::badRequest(
          where + ": only parts {\"type\": \"text\", \"text\": ...} "
                  "are supported",
          where);
    text += part["text"].get<std::string>();
  }
  content = text;
  return std::nullopt;
}

} // namespace

std::optional<ApiError> parseBody(const std::string &text, json &body) {
  StatusOr<json> parsed = parseJson<json>(text, "the body");
  if (!parsed.ok())
    return ApiError::badRequest(parsed.status().message());
  if (!parsed->is_object())
    return ApiError::badRequest("the body must be a JSON object");
  body = std::move(*parsed);
  return std::nullopt;
}

std::optional<ApiError> parseChatRequest(const json &body,
                                         const text::ModelText &text,
                                         CompletionSpec &spec) {
  spec.chat = true;
  Fields fields(body, spec);
  if (auto error = fields.common())
    return error;
  bool logprobs = false;
  if (auto error = fields.boolean("logprobs", logprobs))
    return error;
  std::optional<int64_t> top;
  if (auto error =
          fields.integer("top_logprobs", 0, COHERE2C_MAX_TOP_LOGPROBS, top))
    return error;
  if (top && !logprobs)
    return ApiError::badRequest("top_logprobs needs logprobs: true",
                                "top_logprobs");
  spec.topLogprobs = logprobs ? (int32_t)top.value_or(0) : -1;

  const json *messages = fields.get("messages");
  if (!messages || !messages->is_array() || messages->empty())
    return ApiError::badRequest("messages must be a non-empty list of messages",
                                "messages");
  json chat = {{"messages", *messages}};
  for (size_t i = 0; i < chat["messages"].size(); ++i) {
    json &m = chat["messages"][i];
    if (!m.is_object() || !m.contains("role") || !m["role"].is_string())
      return ApiError::badRequest("messages[" + std::to_string(i) +
                                      "] must be an object with a string role",
                                  "messages");
    if (auto error = flattenContent(m, i))
      return error;
  }
  for (const char *field : {"documents", "tools"})
    if (const json *v = fields.get(field)) {
      if (!v->is_array())
        return ApiError::badRequest(std::string(field) + " must be an array", field);
      chat[field] = *v;
    }
  auto ids = text.encodeChat(chat, /*addGenerationPrompt=*/true);
  if (!ids.ok())
    return ApiError::badRequest(ids.status().message(), "messages");
  spec.prompts.push_back(std::move(*ids));
  return std::nullopt;
}

std::optional<ApiError> parseCompletionRequest(const json &body,
                                               const text::ModelText &text,
                                               int64_t vocabSize,
                                               CompletionSpec &spec) {
  Fields fields(body, spec);
  if (auto error = fields.common())
    return error;
  std::optional<int64_t> logprobs;
  if (auto error =
          fields.integer("logprobs", 0, COHERE2C_MAX_TOP_LOGPROBS, logprobs))
    return error;
  spec.topLogprobs = logprobs ? (int32_t)*logprobs : -1;
  bool echo = false;
  if (auto error = fields.boolean("echo", echo))
    return error;
  if (echo)
    return ApiError::badRequest("echo is not supported", "echo");
  if (!spec.maxTokens)
    spec.maxTokens = 16;

  const json *prompt = fields.get("prompt");
  auto bad = [] {
    return ApiError::badRequest(
        "prompt must be a string, a list of strings, a list of token "
        "ids or a list of lists of token ids",
        "prompt");
  };
  if (!prompt)
    return bad();
  auto ids = [&](const json &list) -> std::optional<std::vector<int32_t>> {
    std::vector<int32_t> out;
    for (const json &id : list) {
      if (!id.is_number_integer() || id.get<int64_t>() < 0 ||
          id.get<int64_t>() >= vocabSize)
        return std::nullopt;
      out.push_back(id.get<int32_t>());
    }
    return out;
  };
  std::vector<json> items;
  if (prompt->is_string() ||
      (prompt->is_array() && !prompt->empty() && (*prompt)[0].is_number()))
    items.push_back(*prompt);
  else if (prompt->is_array() && !prompt->empty())
    items.assign(prompt->begin(), prompt->end());
  else
    return bad();
  for (const json &item : items) {
    if (item.is_string()) {
      auto encoded = text.encodePrompt(item.get<std::string>());
      if (!encoded.ok())
        return ApiError::badRequest(encoded.status().message(), "prompt");
      spec.prompts.push_back(std::move(*encoded));
    } else if (item.is_array() && !item.empty()) {
      auto list = ids(item);
      if (!list)
        return ApiError::badRequest(
            "prompt token ids must be integers in [0, " +
                std::to_string(vocabSize) + ")",
            "prompt");
      spec.prompts.push_back(std::move(*list));
    } else {
      return bad();
    }
  }
  return std::nullopt;
}

} // namespace cohere2c::serve
