//===- OpenAIRequest.h - OpenAI-compatible request bodies -----------------===//
//
// Parses the JSON bodies of POST /v1/chat/completions and /v1/completions
// (OpenAI's API reference; vLLM's extensions top_k and ignore_eos) into what
// the engine runs, checking every field's type and range. Unknown fields
// are ignored, as OpenAI's clients send fields this server has no use for.
//
//===----------------------------------------------------------------------===//
#ifndef COHERE2C_SERVE_OPENAIREQUEST_H
#define COHERE2C_SERVE_OPENAIREQUEST_H

#include "cohere2c/runtime.h"
#include "text/ModelText.h"

#include <nlohmann/json.hpp>

#include <optional>
#include <string>
#include <vector>

namespace cohere2c::serve {

/// An error as OpenAI returns it: the HTTP status and the body's
/// {"error": {"message", "type", "param", "code"}}.
struct ApiError {
  int status = 400;
  std::string message;
  std::string param; // the offending field, or empty
  nlohmann::ordered_json body() const;
  static ApiError badRequest(std::string message, std::string param = "") {
    return {400, std::move(message), std::move(param)};
  }
};

/// One completion request, ready for the engine.
struct CompletionSpec {
  bool chat = false;
  /// One per choice: the chat's rendering, or each prompt of a completion.
  std::vector<std::vector<int32_t>> prompts;
  /// max_tokens / max_completion_tokens; absent: the rest of the context
  /// (chat) or 16 (completions, OpenAI's default).
  std::optional<int64_t> maxTokens;
  /// Sampling as the C API takes it (cohere2c_request_options_t): temperature
  /// 0 is greedy, top_k 0 and top_p 1 keep every token.
  double temperature = 0, topP = 1;
  int64_t topK = 0;
  /// The request's seed; without one each prompt draws its own (as vLLM's
  /// seed None), so that two of them sample independently.
  std::optional<uint64_t> seed;
  std::vector<std::string> stop;
  /// -1: no logprobs; else how many alternatives per token (0 to
  /// COHERE2C_MAX_TOP_LOGPROBS).
  int32_t topLogprobs = -1;
  bool stream = false, includeUsage = false, ignoreEos = false;
};

/// Parses a /v1/chat/completions body: messages (rendered with the model's
/// chat template and add_generation_prompt; documents and tools go to it),
/// and the common fields. Errors: 400 naming the field; 400 for a chat the
/// template rejects (its message).
std::optional<ApiError> parseChatRequest(const nlohmann::ordered_json &body,
                                         const text::ModelText &text,
                                         CompletionSpec &spec);

/// Parses a /v1/completions body: prompt as a string, a list of strings, a
/// list of token ids or a list of such lists (one choice each).
std::optional<ApiError>
parseCompletionRequest(const nlohmann::ordered_json &body,
                       const text::ModelText &text, int64_t vocabSize,
                       CompletionSpec &spec);

/// The body of a POST as JSON. Errors: 400 for text that is not a JSON
/// object.
std::optional<ApiError> parseBody(const std::string &text,
                                  nlohmann::ordered_json &body);

} // namespace cohere2c::serve

#endif // COHERE2C_SERVE_OPENAIREQUEST_H
