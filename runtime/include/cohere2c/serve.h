//===- cohere2c/serve.h - The OpenAI-compatible server, as a library ------===//
//
// What cohere2c-serve runs: an HTTP server (/v1/chat/completions,
// /v1/completions, /v1/models, /tokenize, /detokenize, /health, /metrics)
// over one engine of the C API (cohere2c/runtime.h), with continuous
// batching across HTTP requests. C++17.
//
//===----------------------------------------------------------------------===//
#ifndef COHERE2C_SERVE_H
#define COHERE2C_SERVE_H

#include "cohere2c/runtime.h"

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

namespace cohere2c::serve {

/// Where and how the server takes HTTP requests.
struct HttpServerOptions {
  std::string host = "127.0.0.1";
  uint16_t port = 8000; // 0: any free port
  /// Request bodies past this get 413.
  size_t maxBodyBytes = size_t(32) << 20;
  /// A connection that has not delivered a whole request this long after
  /// opening or after its last response is closed.
  std::chrono::seconds idleTimeout{60};
  /// Connections past this get 503.
  int64_t maxConnections = 4096;
};

struct ServerOptions {
  /// OUT.so from cohere2c-compile.
  std::string artifact;
  /// The weights: a checkpoint folder if not empty, else seeded random ones
  /// if randomSeed is set, else OUT.weights beside the artifact.
  std::string checkpoint;
  std::optional<uint64_t> randomSeed;
  /// A folder whose tokenizer, chat template and generation config replace
  /// the artifact's; empty: the artifact's (which it must then carry).
  std::string tokenizer;
  /// Requests must carry Authorization: Bearer apiKey; empty: no key.
  std::string apiKey;
  /// The model's name in the API.
  std::string modelName;
  HttpServerOptions http;
  /// max_batch defaults to 64 here: a server's batch is its clients'. The
  /// EOS ids are the text's (the artifact's or `tokenizer`'s) unless given.
  cohere2c_engine_options_t engine;
  /// Most requests waiting for admission before new ones get 503.
  int64_t maxWaiting = 4096;
  /// Seconds the requests in flight may take to finish after SIGTERM.
  double shutdownGraceSeconds = 30;

  ServerOptions() {
    cohere2c_engine_options_initialize(&engine);
    engine.max_batch = 64;
  }
};

/// Runs the server for the life of the process: blocks SIGTERM and SIGINT
/// in the calling thread and every thread it starts (and ignores SIGPIPE),
/// listens at once (GET /health answers 503 while the model loads, 200
/// once it is ready), loads the model through the C API, and serves until
/// SIGTERM or SIGINT; then it stops accepting, lets the requests in flight
/// finish within shutdownGraceSeconds, cancels the rest, and returns OK. A
/// signal while loading ends the process at once with status 0. Progress
/// lines on stderr start with "cohere2c-serve: " ("listening on URL",
/// "ready: ..."). Errors (the caller frees them): the address cannot be
/// bound; the C API's errors of loading (INVALID_ARGUMENT for the files,
/// INTERNAL for the executor); an artifact without a tokenizer and no
/// `tokenizer` folder, or a tokenizer larger than the model's vocabulary
/// (FAILED_PRECONDITION).
cohere2c_status_t runServer(const ServerOptions &options);

} // namespace cohere2c::serve

#endif // COHERE2C_SERVE_H
