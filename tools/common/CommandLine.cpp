//===- CommandLine.cpp ----------------------------------------------------===//

#include "CommandLine.h"

#include <cctype>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <limits>

namespace cohere2c {

int fail(std::string_view tool, std::string_view message) {
  std::cerr << tool << ": error: " << message << "\n";
  return 1;
}

int exitAfterStdout(std::string_view tool, int status) {
  errno = 0;
  std::cout.flush();
  if (std::fflush(stdout) == 0 && std::cout && !std::ferror(stdout))
    return status;
  return fail(tool, std::string("stdout: ") +
                        (errno ? std::strerror(errno) : "write failed"));
}

std::optional<int> parseCommandLine(CLI::App &app, int argc, char **argv,
                                    std::string_view tool) {
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError &e) {
    if (e.get_exit_code() == 0)
      return app.exit(e);
    return fail(tool, e.what());
  }
  return std::nullopt;
}

CLI::Validator integerIn(int64_t low, int64_t high) {
  std::string what = "an integer in [" + std::to_string(low) + ", " +
                     std::to_string(high) + "]";
  return CLI::Validator(
      [=](std::string &input) -> std::string {
        char *end = nullptr;
        errno = 0;
        long long value = std::strtoll(input.c_str(), &end, 10);
        if (input.empty() || std::isspace((unsigned char)input[0]) ||
            *end != '\0' || errno == ERANGE || value < low || value > high)
          return "Value " + input + " is not " + what;
        // CLI11 converts with base 0: "010" would be 8.
        input = std::to_string(value);
        return "";
      },
      what);
}

CLI::Validator uint64Number() {
  return CLI::Validator(
      [](std::string &input) -> std::string {
        char *end = nullptr;
        errno = 0;
        unsigned long long value = std::strtoull(input.c_str(), &end, 10);
        if (input.empty() || !std::isdigit((unsigned char)input[0]) ||
            *end != '\0' || errno == ERANGE)
          return "Value " + input + " is not an integer in [0, 2^64 - 1]";
        input = std::to_string(value); // as integerIn: decimal, not base 0
        return "";
      },
      "UINT64");
}

CLI::Validator finiteNumber(NumberRange range) {
  return CLI::Validator(
      [range](std::string &input) -> std::string {
        double value;
        if (!CLI::detail::lexical_cast(input, value) || !range.holds(value))
          return "Value " + input + " is not " + range.what;
        return "";
      },
      range.what);
}

CLI::Validator nonEmpty() {
  return CLI::Validator(
      [](std::string &input) -> std::string { return input.empty() ? "Value is empty" : ""; },
      "");
}

CLI::Option *addIntegerOption(CLI::App &app, const std::string &name,
                              int64_t &value, const std::string &help,
                              int64_t low, int64_t high) {
  return app.add_option(name, value, help)
      ->transform(integerIn(low, high))
      ->capture_default_str();
}

void addWeightsOptions(CLI::App &app, std::string &checkpoint,
                       std::optional<uint64_t> &randomSeed) {
  auto *fromCheckpoint =
      app.add_option("--checkpoint", checkpoint,
                     "bind weights from a Hugging Face checkpoint folder")
          ->check(CLI::ExistingDirectory);
  app.add_option("--random-weights", randomSeed, "bind seeded random weights")
      ->transform(uint64Number())
      ->excludes(fromCheckpoint);
}

void addEngineOptions(CLI::App &app, cohere2c_engine_options_t &engine) {
  // The ranges of cohere2c_engine_options_t (cohere2c/runtime.h).
  constexpr int64_t kInt32Max = std::numeric_limits<int32_t>::max();
  addIntegerOption(app, "--prefill-chunk", engine.prefill_chunk,
                   "most prompt tokens of a request per step (0: whole "
                   "prompt)",
                   0, std::numeric_limits<int64_t>::max());
  addIntegerOption(app, "--block-size", engine.block_size,
                   "tokens per KV block", 1, int64_t(1) << 16);
  addIntegerOption(app, "--kv-blocks", engine.kv_blocks,
                   "blocks in the KV pool all KV groups share (0: cuda, what "
                   "--gpu-memory-utilization leaves; host, room for "
                   "--max-batch full contexts, at most 4 GiB)",
                   0, kInt32Max);
  addIntegerOption(app, "--max-batch", engine.max_batch,
                   "most requests in flight", 1, int64_t(1) << 16);
  addIntegerOption(app, "--max-num-batched-tokens",
                   engine.max_num_batched_tokens,
                   "most tokens per step, decode tokens first, then prompt "
                   "chunks (at least --max-batch)",
                   1, kInt32Max);
  app.add_option("--gpu-memory-utilization", engine.gpu_memory_utilization,
                 "cuda: the fraction of the device's memory to take")
      ->check(finiteNumber(
          {"a number in (0, 1]", [](double u) { return u > 0 && u <= 1; }}))
      ->capture_default_str();
  app.add_flag_callback(
      "--no-prefix-cache", [&engine] { engine.prefix_cache = false; },
      "never reuse cached prefixes");
}

std::optional<std::string> engineOptionsError(const cohere2c_engine_options_t &engine) {
  if (engine.max_num_batched_tokens < engine.max_batch)
    return "--max-num-batched-tokens (" + std::to_string(engine.max_num_batched_tokens) +
           ") must be at least --max-batch (" + std::to_string(engine.max_batch) + ")";
  return std::nullopt;
}

} // namespace cohere2c
