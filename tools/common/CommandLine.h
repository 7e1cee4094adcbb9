//===- CommandLine.h - What the runtime tools' command lines share --------===//
//
// cohere2c-run, cohere2c-serve and cohere2c-tokenize read their command
// lines with CLI11 the same way: an error is "TOOL: error: MESSAGE" on
// stderr and exit status 1, integers are checked against their range as
// decimal text (CLI11 alone wraps and saturates), and the two tools that
// load a model take its weights and engine options with the same flags,
// whose ranges are cohere2c/runtime.h's.
//
//===----------------------------------------------------------------------===//
#ifndef COHERE2C_TOOLS_COMMON_COMMANDLINE_H
#define COHERE2C_TOOLS_COMMON_COMMANDLINE_H

#include "cohere2c/runtime.h"

#include <CLI/CLI.hpp>

#include <cmath>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace cohere2c {

/// Prints "TOOL: error: MESSAGE" on stderr, `tool` naming the tool; returns
/// 1, the tools' exit status for an error.
int fail(std::string_view tool, std::string_view message);

/// `status` once everything written to stdout has reached it; else, as
/// fail, "TOOL: error: stdout: REASON" (a full disk, a closed file) and 1.
int exitAfterStdout(std::string_view tool, int status);

/// Parses `argv` into `app`'s options. std::nullopt: go on; else the status
/// the tool exits with: 0 after --help (printed), 1 after a parse error
/// (printed by fail, so it starts with the tool's name like every error).
std::optional<int> parseCommandLine(CLI::App &app, int argc, char **argv,
                                    std::string_view tool);

/// A decimal integer in [low, high]: "Value TEXT is not an integer in
/// [LOW, HIGH]" otherwise; the text is rewritten in canonical decimal for
/// CLI11, which would read "010" as octal. CLI11 itself also reads "-1"
/// into a uint64_t as 2^64 - 1 and saturates integers past the type's range.
CLI::Validator integerIn(int64_t low, int64_t high);

/// A decimal integer in [0, 2^64 - 1] (seeds): "Value TEXT is not an
/// integer in [0, 2^64 - 1]" otherwise.
CLI::Validator uint64Number();

/// The finite numbers for which `ok` holds, described by `what`; one range
/// serves an option and a requests file's field alike.
struct NumberRange {
  const char *what;
  bool (*ok)(double);
  bool holds(double v) const { return std::isfinite(v) && ok(v); }
};

/// A number in `range`: "Value TEXT is not WHAT" otherwise. CLI::Range lets
/// NaN through, and a double option takes "inf".
CLI::Validator finiteNumber(NumberRange range);

/// Any text but the empty one ("Value is empty" otherwise): a file, folder
/// or name given as "" is an error, not the flag's absence.
CLI::Validator nonEmpty();

/// Adds the option `name` into `value`, checked by integerIn(low, high),
/// with its default shown in --help.
CLI::Option *addIntegerOption(CLI::App &app, const std::string &name,
                              int64_t &value, const std::string &help,
                              int64_t low, int64_t high);

/// --checkpoint DIR and --random-weights SEED (one at most): where the
/// weights come from, as bindWeights (cohere2c/runtime.hpp) takes them.
void addWeightsOptions(CLI::App &app, std::string &checkpoint,
                       std::optional<uint64_t> &randomSeed);

/// The flags of `engine`'s fields, with its values as their defaults:
/// --prefill-chunk, --block-size, --kv-blocks, --max-batch,
/// --max-num-batched-tokens, --gpu-memory-utilization and --no-prefix-cache
/// (which clears prefix_cache).
void addEngineOptions(CLI::App &app, cohere2c_engine_options_t &engine);

/// What addEngineOptions' flags do not check one by one, in their terms:
/// "--max-num-batched-tokens (N) must be at least --max-batch (M)" (every
/// running request decodes a token in each step); std::nullopt if none.
std::optional<std::string> engineOptionsError(const cohere2c_engine_options_t &engine);

} // namespace cohere2c

#endif // COHERE2C_TOOLS_COMMON_COMMANDLINE_H
