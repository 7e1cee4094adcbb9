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

#include "CommandLine.h"
#include "cohere2c/runtime.hpp"
#include "cohere2c/serve.h"

#include <filesystem>
#include <limits>

using namespace cohere2c;
using namespace cohere2c::serve;

namespace {

constexpr const char *kTool = "cohere2c-serve";

/// The command line; ServerOptions but for the flag that sets its field
/// indirectly.
struct Options : ServerOptions {
  int64_t idleTimeoutSeconds = 60;
};

std::optional<int> parseOptions(int argc, char **argv, Options &o) {
  CLI::App app{
      "cohere2c-serve: an OpenAI-compatible HTTP server for a compiled Cohere2 "
      "model.\n  cohere2c-serve model.so --port 8000"};
  app.add_option("artifact", o.artifact, "OUT.so from cohere2c-compile")
      ->required();
  addWeightsOptions(app, o.checkpoint, o.randomSeed);
  app.add_option("--tokenizer", o.tokenizer,
                 "take the tokenizer, chat template and generation config from "
                 "this folder, "
                 "not from the artifact")
      ->check(CLI::ExistingDirectory);
  app.add_option("--host", o.http.host, "address to listen on")
      ->capture_default_str();
  app.add_option("--port", o.http.port, "port (0: any free one)")
      ->transform(integerIn(0, 65535))
      ->capture_default_str();
  // An empty key would turn the check off unsaid (omit the option for that).
  app.add_option("--api-key", o.apiKey, "require Authorization: Bearer KEY")
      ->check(nonEmpty());
  app.add_option(
      "--served-model-name", o.modelName,
      "the model's name in the API (default: the artifact's file stem)")
      ->check(nonEmpty());
  addEngineOptions(app, o.engine);
  addIntegerOption(app, "--max-waiting", o.maxWaiting,
                   "most requests waiting for admission before 503 (queue "
                   "full)",
                   1, std::numeric_limits<int64_t>::max());
  app.add_option("--max-body-bytes", o.http.maxBodyBytes,
                 "larger request bodies get 413")
      ->transform(integerIn(1, std::numeric_limits<int64_t>::max()))
      ->capture_default_str();
  addIntegerOption(app, "--idle-timeout", o.idleTimeoutSeconds,
                   "seconds a connection may take to send a whole request", 1,
                   86400);
  app.add_option("--shutdown-grace", o.shutdownGraceSeconds,
                 "seconds requests in flight may take to finish after SIGTERM")
      ->check(finiteNumber({"a number in [0, 3600]",
                            [](double s) { return s >= 0 && s <= 3600; }}))
      ->capture_default_str();
  if (std::optional<int> exit = parseCommandLine(app, argc, argv, kTool))
    return exit;
  if (std::optional<std::string> error = engineOptionsError(o.engine))
    return fail(kTool, *error);
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
  if (std::optional<std::string> error = takeError(runServer(o)))
    return fail(kTool, *error);
  return 0;
}
