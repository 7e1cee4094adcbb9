//===- Api.h - cohere2c-serve's endpoints ---------------------------------===//
//
// vLLM's OpenAI-compatible server, endpoint by endpoint:
//   POST /v1/chat/completions, POST /v1/completions  (Completion.h)
//   GET  /v1/models
//   POST /tokenize   {"prompt": T, "add_special_tokens": B} or
//                    {"messages": [...], "add_generation_prompt": B}
//                    -> {"tokens": [...], "count": N, "max_model_len": C}
//   POST /detokenize {"tokens": [...]} -> {"prompt": T}
//   GET  /health     503 while the model loads, 200 when ready
//   GET  /metrics    Prometheus text (Metrics.h)
// With an API key, /v1/*, /tokenize and /detokenize need "Authorization:
// Bearer KEY" (401 otherwise). Errors are OpenAI's error object with the
// status: 400, 401, 404, 405, 413, 500, 503 (with Retry-After).
//
// Thread-safe: every HTTP thread calls handle() at once.
//
//===----------------------------------------------------------------------===//
#ifndef COHERE2C_SERVE_API_H
#define COHERE2C_SERVE_API_H

#include "serve/Completion.h"
#include "serve/Http.h"

#include <atomic>
#include <memory>

namespace cohere2c::serve {

class Api {
public:
  Api(std::string apiKey, std::string modelName, Metrics &metrics)
      : apiKey_(std::move(apiKey)), modelName_(std::move(modelName)),
        metrics_(metrics) {}

  /// The model is loaded: requests are served from now on. `context`
  /// lives as long as the Api.
  void setReady(const CompletionContext *context) { context_.store(context); }

  HttpResponse handle(const HttpRequest &request, StreamWriter &stream);

  /// A response carrying `error`.
  static HttpResponse errorResponse(const ApiError &error);

private:
  HttpResponse completions(const HttpRequest &request, StreamWriter &stream,
                           bool chat);
  HttpResponse tokenize(const HttpRequest &request);
  HttpResponse detokenize(const HttpRequest &request);
  HttpResponse models() const;

  std::string apiKey_, modelName_;
  Metrics &metrics_;
  std::atomic<const CompletionContext *> context_{nullptr};
};

} // namespace cohere2c::serve

#endif // COHERE2C_SERVE_API_H
