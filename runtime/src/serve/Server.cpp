//===- Server.cpp - runServer (cohere2c/serve.h) --------------------------===//
//
// Loads through the C API (the artifact, its weights, the engine of its
// target) and drives the engine through it (EngineLoop). The text (tokenizer
// and chat template) is the one behind the artifact's handle
// (capi/Handles.h), which the OpenAI layer renders and decodes with.
//
//===----------------------------------------------------------------------===//

#include "cohere2c/runtime.hpp"
#include "cohere2c/serve.h"

#include "Artifact/TextFiles.h"
#include "capi/Handles.h"
#include "serve/Api.h"
#include "serve/Completion.h"
#include "serve/EngineLoop.h"
#include "serve/HttpServer.h"

#include <atomic>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <pthread.h>
#include <thread>

namespace cohere2c::serve {

namespace {

/// Everything the server serves with, once loaded; destroyed in reverse:
/// the engine thread before the engine, the engine before its artifact.
struct Served {
  ArtifactHandle artifact;
  /// --tokenizer's text, when given.
  std::unique_ptr<text::ModelText> ownText;
  const text::ModelText *text = nullptr;
  EngineHandle engine;
  std::unique_ptr<EngineLoop> loop;
  std::unique_ptr<CompletionContext> context;
};

/// The artifact's text, or that of the `tokenizer` folder; its vocabulary
/// must fit the model's.
cohere2c_status_t loadText(const ServerOptions &o, Served &s) {
  const ModelConfig &config = s.artifact->loaded->manifest().config;
  if (o.tokenizer.empty()) {
    s.text = s.artifact->text.get();
  } else {
    auto files = TextFiles::readCheckpoint(o.tokenizer);
    if (!files.ok())
      return capi::statusOf(files.status(), COHERE2C_STATUS_INVALID_ARGUMENT);
    auto text =
        text::ModelText::create(*files, o.tokenizer, config.eosTokenIds);
    if (!text.ok())
      return capi::statusOf(text.status(), COHERE2C_STATUS_INVALID_ARGUMENT);
    s.ownText = std::move(*text);
    s.text = s.ownText.get();
  }
  if (!s.text)
    return capi::makeStatus(
        COHERE2C_STATUS_FAILED_PRECONDITION,
        o.artifact + ": carries no tokenizer " + kNoTokenizerReason +
            ": give --tokenizer DIR, or compile from a checkpoint folder "
            "with tokenizer.json");
  if (s.text->tokenizer().vocabSize() > config.vocabSize)
    return capi::makeStatus(
        COHERE2C_STATUS_FAILED_PRECONDITION,
        "the tokenizer has " + std::to_string(s.text->tokenizer().vocabSize()) +
            " tokens, more than the model's vocab_size " +
            std::to_string(config.vocabSize));
  return nullptr;
}

cohere2c_status_t load(const ServerOptions &o, Metrics &metrics, Served &s) {
  cohere2c_artifact_t *artifact = nullptr;
  if (cohere2c_status_t e =
          cohere2c_artifact_open(o.artifact.c_str(), &artifact))
    return e;
  s.artifact.reset(artifact);
  if (cohere2c_status_t e = loadText(o, s))
    return e;
  if (cohere2c_status_t e = bindWeights(artifact, o.checkpoint, o.randomSeed))
    return e;
  cohere2c_engine_options_t engineOptions = o.engine;
  if (!engineOptions.eos_token_ids) {
    engineOptions.eos_token_ids = s.text->eosTokenIds().data();
    engineOptions.eos_token_count = s.text->eosTokenIds().size();
  }
  cohere2c_engine_t *engine = nullptr;
  if (cohere2c_status_t e =
          cohere2c_engine_create(artifact, &engineOptions, &engine))
    return e;
  s.engine.reset(engine);
  cohere2c_artifact_info_t info;
  cohere2c_engine_options_t inForce;
  if (cohere2c_status_t e = cohere2c_artifact_info(artifact, &info))
    return e;
  if (cohere2c_status_t e = cohere2c_engine_options(engine, &inForce))
    return e;
  s.loop = std::make_unique<EngineLoop>(engine, metrics, o.maxWaiting);
  std::vector<int64_t> eos(inForce.eos_token_ids,
                           inForce.eos_token_ids + inForce.eos_token_count);
  s.context.reset(new CompletionContext{*s.text, *s.loop, metrics, o.modelName,
                                        info.max_position_embeddings,
                                        std::move(eos)});
  return nullptr;
}

} // namespace

cohere2c_status_t runServer(const ServerOptions &o) {
  // Every thread started from here on leaves SIGTERM and SIGINT to sigwait.
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGTERM);
  sigaddset(&signals, SIGINT);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);
  std::signal(SIGPIPE, SIG_IGN);

  Metrics metrics;
  Api api(o.apiKey, o.modelName, metrics);
  auto server = HttpServer::listen(o.http, api);
  if (!server.ok())
    return capi::statusOf(server.status(), COHERE2C_STATUS_INVALID_ARGUMENT);
  // An IPv6 address is bracketed in a URL (RFC 3986 3.2.2).
  bool ipv6 = o.http.host.find(':') != std::string::npos;
  std::fprintf(stderr,
               "cohere2c-serve: listening on http://%s%s%s:%u (loading %s)\n",
               ipv6 ? "[" : "", o.http.host.c_str(), ipv6 ? "]" : "",
               (*server)->port(), o.artifact.c_str());
  std::thread acceptor([&] { (*server)->run(); });
  // A signal while loading ends the process at once: nothing is in flight.
  // Once serving, the first stops accepting and runServer shuts down
  // gracefully; a second ends the process at once, as an operator who sends
  // it again means. Either immediate end exits 128 + the signal, as a shell
  // reports a process the signal killed.
  static std::atomic<bool> ready{false}; // outlives runServer: the watcher is detached
  std::thread signalWatcher([&, signals] {
    int received;
    sigwait(&signals, &received);
    if (!ready) {
      std::fprintf(stderr, "cohere2c-serve: %s while loading: exiting\n",
                   strsignal(received));
      std::_Exit(128 + received);
    }
    std::fprintf(stderr, "cohere2c-serve: %s: shutting down\n",
                 strsignal(received));
    (*server)->stopAccepting();
    sigwait(&signals, &received);
    std::fprintf(stderr, "cohere2c-serve: %s again: exiting now\n",
                 strsignal(received));
    std::_Exit(128 + received);
  });
  signalWatcher.detach();

  Served served;
  if (cohere2c_status_t failed = load(o, metrics, served)) {
    (*server)->stopAccepting();
    acceptor.join();
    return failed;
  }
  api.setReady(served.context.get());
  ready = true;
  cohere2c_engine_options_t engine;
  if (cohere2c_status_t e =
          cohere2c_engine_options(served.engine.get(), &engine))
    return e;
  std::fprintf(
      stderr,
      "cohere2c-serve: ready: model \"%s\", %lld KV blocks of %lld tokens, "
      "batch up to %lld\n",
      o.modelName.c_str(), (long long)engine.kv_blocks,
      (long long)engine.block_size, (long long)engine.max_batch);
  acceptor.join(); // until a signal stops accepting
  auto grace =
      std::chrono::milliseconds((int64_t)(o.shutdownGraceSeconds * 1000));
  served.loop->shutdown(grace);
  // Connections answer their cancelled requests, then close.
  if (!(*server)->waitForConnections(std::chrono::seconds(5)))
    std::_Exit(0);
  return nullptr;
}

} // namespace cohere2c::serve
