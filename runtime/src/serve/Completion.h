//===- Completion.h - Serving one completion request ----------------------===//
//
// Runs one chat or text completion on the HTTP thread that received it: it
// submits one engine request per choice, reads their tokens, turns them
// into text (incremental decoding, special tokens skipped), applies stop
// strings (never part of the output; they may span tokens, so text that
// could begin one is held back from the stream until it cannot), and
// answers in OpenAI's shapes: one JSON body, or server-sent events ending
// in `data: [DONE]`. A client that goes away cancels its requests, freeing
// their KV blocks.
//
//===----------------------------------------------------------------------===//
#ifndef COHERE2C_SERVE_COMPLETION_H
#define COHERE2C_SERVE_COMPLETION_H

#include "serve/EngineLoop.h"
#include "serve/Metrics.h"
#include "serve/OpenAIRequest.h"
#include "text/ModelText.h"

#include <chrono>
#include <functional>
#include <string>
#include <variant>

namespace cohere2c::serve {

/// What a completion needs of the server.
struct CompletionContext {
  const text::ModelText &text;
  EngineLoop &engine;
  Metrics &metrics;
  std::string modelName;
  int64_t contextLength = 0; // max_position_embeddings
  std::vector<int64_t> eosTokenIds;
};

/// The client's side of a response.
struct ResponseSink {
  /// Streaming: sends one server-sent event's data; false once the client
  /// is gone.
  std::function<bool(const std::string &data)> sendEvent;
  /// Whether the client has gone (hung up) while nothing is sent.
  std::function<bool()> clientGone;
};

/// Serves `spec`. Without spec.stream the response body comes back; with
/// it, the events go to sink.sendEvent and an empty body comes back (the
/// caller ends the stream). Errors as ApiError: a prompt longer than the
/// context or the KV cache (400), a full queue or a shutdown (503), an
/// engine failure (500); a client gone mid-stream ends it quietly.
std::variant<std::string, ApiError>
serveCompletion(const CompletionSpec &spec, const CompletionContext &context,
                const ResponseSink &sink,
                std::chrono::steady_clock::time_point arrived);

} // namespace cohere2c::serve

#endif // COHERE2C_SERVE_COMPLETION_H
