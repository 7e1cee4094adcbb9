//===- cohere2c-serve.cpp - An OpenAI-compatible server -------------------===//
//
//   cohere2c-serve model.so [--port 8000] [--api-key KEY] [--max-batch 64]
//
// Parses the command line and runs the server of cohere2c/serve.h: it
// listens at once (GET /health answers 503 while the model loads, 200 once
// it is ready); SIGTERM or SIGINT stops accepting, lets the requests in
// flight finish within --shutdown-grace seconds, cancels the rest, and the
// tool exits 0.
//
//===----------------------------------------------------------------------===//

#include "cohere2c/serve.h"

#include <CLI/CLI.hpp>

#include <filesystem>
#include <iostream>

using namespace cohere2c::serve;

namespace {

/// The command line; ServerOptions but for the flags that set its fields
/// indirectly.
struct Options : ServerOptions {
  bool noPrefixCache = false;
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
  app.add_option("--max-batch", o.engine.max_batch, "most requests in flight")
      ->check(CLI::Range(int64_t(1), int64_t(1) << 16))
      ->capture_default_str();
  app.add_option("--kv-blocks", o.engine.kv_blocks,
                 "blocks per KV group (0: cuda, what --gpu-memory-utilization "
                 "leaves; host, room for --max-batch full contexts)")
      ->check(CLI::Range(int64_t(0), (int64_t(1) << 31) - 1))
      ->capture_default_str();
  app.add_option("--max-num-batched-tokens", o.engine.max_num_batched_tokens,
                 "most tokens per step, decode tokens first, then prompt "
                 "chunks (at least --max-batch)")
      ->check(CLI::Range(int64_t(1), (int64_t(1) << 31) - 1))
      ->capture_default_str();
  app.add_option("--gpu-memory-utilization", o.engine.gpu_memory_utilization,
                 "cuda: the fraction of the device's memory to take")
      ->check(CLI::Range(0.0, 1.0))
      ->capture_default_str();
  app.add_option("--block-size", o.engine.block_size, "tokens per KV block")
      ->check(CLI::Range(int64_t(1), int64_t(1) << 16))
      ->capture_default_str();
  app.add_option("--prefill-chunk", o.engine.prefill_chunk,
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
  app.add_option("--shutdown-grace", o.shutdownGraceSeconds,
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
  o.engine.prefix_cache = !o.noPrefixCache;
  o.http.idleTimeout = std::chrono::seconds(o.idleTimeoutSeconds);
  if (o.modelName.empty())
    o.modelName = std::filesystem::path(o.artifact).stem().string();
  return std::nullopt;
}

} // namespace

int main(int argc, char **argv) {
  Options o;
  if (std::optional<int> exit = parseOptions(argc, argv, o))
    return *exit;
  cohere2c_status_t served = runServer(o);
  if (cohere2c_status_is_ok(served))
    return 0;
  std::string message = cohere2c_status_message(served);
  cohere2c_status_free(served);
  return fail(message);
}
