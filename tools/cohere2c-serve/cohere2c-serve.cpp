//===- cohere2c-serve.cpp - An OpenAI-compatible server -------------------===//
//
//   cohere2c-serve model.so [--port 8000] [--api-key KEY] [--max-batch 64]
//
// Listens at once (GET /health answers 503 while the model loads, 200 once
// it is ready), then serves the endpoints of serve/Api.h. SIGTERM or SIGINT:
// stops accepting, lets the requests in flight finish within
// --shutdown-grace seconds, cancels the rest, and exits 0.
//
//===----------------------------------------------------------------------===//

#include "ModelLoading.h"
#include "serve/Api.h"
#include "serve/EngineLoop.h"
#include "serve/HttpServer.h"

#include <CLI/CLI.hpp>

#include <atomic>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <pthread.h>
#include <thread>

using namespace cohere2c;
using namespace cohere2c::serve;

namespace {

struct Options {
  std::string artifact, checkpoint, tokenizer, apiKey, modelName;
  std::optional<uint64_t> randomSeed;
  HttpServerOptions http;
  EngineOptions engine;
  bool noPrefixCache = false;
  int64_t maxWaiting = 4096;
  double shutdownGrace = 30;
  int64_t idleTimeoutSeconds = 60;
};

int fail(const std::string &message) {
  std::cerr << "cohere2c-serve: error: " << message << "\n";
  return 1;
}

std::optional<int> parseOptions(int argc, char **argv, Options &o) {
  CLI::App app{
      "cohere2c-serve: an OpenAI-compatible HTTP server for a compiled Cohere2 "
      "model.\n  cohere2c-serve model.so --port 8000"};
  app.add_option("artifact", o.artifact, "OUT.so from cohere2c-compile")
      ->required();
  auto *ckpt =
      app.add_option("--checkpoint", o.checkpoint,
                     "bind weights from a Hugging Face checkpoint folder");
  app.add_option("--random-weights", o.randomSeed, "bind seeded random weights")
      ->excludes(ckpt);
  app.add_option("--tokenizer", o.tokenizer,
                 "take the tokenizer, chat template and generation config from "
                 "this folder, "
                 "not from the artifact");
  app.add_option("--host", o.http.host, "address to listen on")
      ->capture_default_str();
  app.add_option("--port", o.http.port, "port (0: any free one)")
      ->capture_default_str();
  app.add_option("--api-key", o.apiKey, "require Authorization: Bearer KEY");
  app.add_option(
      "--served-model-name", o.modelName,
      "the model's name in the API (default: the artifact's file stem)");
  app.add_option("--max-batch", o.engine.maxBatch, "most requests in flight")
      ->check(CLI::Range(int64_t(1), int64_t(1) << 16))
      ->capture_default_str();
  app.add_option("--kv-blocks", o.engine.numBlocks,
                 "blocks per KV group (0: room for --max-batch full contexts)")
      ->check(CLI::Range(int64_t(0), (int64_t(1) << 31) - 1))
      ->capture_default_str();
  app.add_option("--block-size", o.engine.blockSize, "tokens per KV block")
      ->check(CLI::Range(int64_t(1), int64_t(1) << 16))
      ->capture_default_str();
  app.add_option("--prefill-chunk", o.engine.prefillChunk,
                 "most prompt tokens of a request per step (0: whole prompt)")
      ->check(CLI::Range(int64_t(0), INT64_MAX))
      ->capture_default_str();
  app.add_flag("--no-prefix-cache", o.noPrefixCache,
               "never reuse cached prefixes");
  app.add_option("--max-waiting", o.maxWaiting,
                 "most requests waiting for admission before 503 (queue full)")
      ->check(CLI::Range(int64_t(1), INT64_MAX))
      ->capture_default_str();
  app.add_option("--max-body-bytes", o.http.maxBodyBytes,
                 "larger request bodies get 413")
      ->capture_default_str();
  app.add_option("--idle-timeout", o.idleTimeoutSeconds,
                 "seconds a connection may take to send a whole request")
      ->check(CLI::Range(1, 86400))
      ->capture_default_str();
  app.add_option("--shutdown-grace", o.shutdownGrace,
                 "seconds requests in flight may take to finish after SIGTERM")
      ->check(CLI::Range(0.0, 3600.0))
      ->capture_default_str();
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError &e) {
    if (e.get_exit_code() == 0)
      return app.exit(e);
    return fail(e.what());
  }
  o.engine.prefixCache = !o.noPrefixCache;
  o.http.idleTimeout = std::chrono::seconds(o.idleTimeoutSeconds);
  if (o.modelName.empty())
    o.modelName = std::filesystem::path(o.artifact).stem().string();
  return std::nullopt;
}

/// Everything the server serves with, once loaded.
struct Served {
  std::unique_ptr<LoadedArtifact> artifact;
  std::unique_ptr<text::ModelText> text;
  std::unique_ptr<WeightBuffer> weights;
  std::unique_ptr<Executor> executor;
  std::unique_ptr<Engine> engine;
  std::unique_ptr<EngineLoop> loop;
  std::unique_ptr<CompletionContext> context;
};

/// The artifact's text, or --tokenizer's; its vocabulary must fit the
/// model's.
StatusOr<std::unique_ptr<text::ModelText>>
loadServedText(const Options &o, const LoadedArtifact &artifact) {
  const ModelConfig &config = artifact.manifest().config;
  StatusOr<std::unique_ptr<text::ModelText>> text =
      std::unique_ptr<text::ModelText>();
  if (o.tokenizer.empty()) {
    text = loadText(artifact);
  } else {
    auto files = TextFiles::readCheckpoint(o.tokenizer);
    if (!files.ok())
      return files.status();
    text = text::ModelText::create(*files, o.tokenizer, config.eosTokenIds);
  }
  if (!text.ok())
    return text.status();
  if (!*text)
    return Status::error(
        o.artifact + ": carries no tokenizer (compiled from a config alone): "
                     "give --tokenizer DIR, or compile from a checkpoint "
                     "folder with tokenizer.json");
  if ((*text)->tokenizer().vocabSize() > config.vocabSize)
    return Status::error("the tokenizer has " +
                         std::to_string((*text)->tokenizer().vocabSize()) +
                         " tokens, more than the model's vocab_size " +
                         std::to_string(config.vocabSize));
  return text;
}

Status load(Options &o, Metrics &metrics, Served &s) {
  auto artifact = LoadedArtifact::load(o.artifact);
  if (!artifact.ok())
    return artifact.status();
  s.artifact = std::move(*artifact);
  auto text = loadServedText(o, *s.artifact);
  if (!text.ok())
    return text.status();
  s.text = std::move(*text);
  o.engine.eosTokenIds = s.text->eosTokenIds();
  auto weights = loadWeights(*s.artifact, o.checkpoint, o.randomSeed);
  if (!weights.ok())
    return weights.status();
  s.weights = std::move(*weights);
  auto executor = createExecutor(*s.artifact, *s.weights, o.engine);
  if (!executor.ok())
    return executor.status();
  s.executor = std::move(*executor);
  const Manifest &manifest = s.artifact->manifest();
  auto engine = Engine::create(*s.executor, manifest, o.engine);
  if (!engine.ok())
    return engine.status();
  s.engine = std::move(*engine);
  s.loop = std::make_unique<EngineLoop>(*s.engine, metrics, o.maxWaiting);
  s.context.reset(new CompletionContext{*s.text, *s.loop, metrics, o.modelName,
                                        manifest.config.maxPositionEmbeddings,
                                        s.text->eosTokenIds()});
  return Status::success();
}

} // namespace

int main(int argc, char **argv) {
  Options o;
  o.engine.maxBatch = 64; // a server's batch is its clients'
  if (std::optional<int> exit = parseOptions(argc, argv, o))
    return *exit;
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
    return fail(server.status().message());
  std::fprintf(stderr,
               "cohere2c-serve: listening on http://%s:%u (loading %s)\n",
               o.http.host.c_str(), (*server)->port(), o.artifact.c_str());
  std::thread acceptor([&] { (*server)->run(); });
  // A signal while loading ends the process at once: nothing is in flight.
  // Later it stops accepting, and main shuts down.
  std::atomic<bool> ready{false};
  std::thread signalWatcher([&, signals] {
    int received;
    sigwait(&signals, &received);
    if (!ready)
      std::_Exit(0);
    std::fprintf(stderr, "cohere2c-serve: %s: shutting down\n",
                 strsignal(received));
    (*server)->stopAccepting();
  });

  Served served;
  Status loaded = load(o, metrics, served);
  if (!loaded.ok()) {
    signalWatcher.detach();
    (*server)->stopAccepting();
    acceptor.join();
    return fail(loaded.message());
  }
  api.setReady(served.context.get());
  ready = true;
  std::fprintf(
      stderr,
      "cohere2c-serve: ready: model \"%s\", %lld KV blocks of %lld tokens "
      "per group, batch up to %lld\n",
      o.modelName.c_str(), (long long)o.engine.numBlocks,
      (long long)o.engine.blockSize, (long long)o.engine.maxBatch);
  acceptor.join(); // until a signal stops accepting
  signalWatcher.join();
  auto grace = std::chrono::milliseconds((int64_t)(o.shutdownGrace * 1000));
  served.loop->shutdown(grace);
  // Connections answer their cancelled requests, then close.
  if (!(*server)->waitForConnections(std::chrono::seconds(5)))
    std::_Exit(0);
  return 0;
}
