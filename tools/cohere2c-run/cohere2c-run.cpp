//===- cohere2c-run.cpp - Load a compiled model and generate --------------===//
//
//   cohere2c-run tiny.so --prompt-ids 5,17,33 --max-new-tokens 24
//   cohere2c-run tiny.so --requests requests.jsonl --max-batch 8
//
// stdout: the generated ids (one line), or one JSON line per finished
// request; stderr: timings and KV-cache use.
//
//===----------------------------------------------------------------------===//

#include "Artifact.h"
#include "Model/SafeTensors.h"
#include "Weights.h"
#include "cuda/CudaExecutor.h"
#include "host/HostExecutor.h"
#include "scheduler/Engine.h"

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <sys/stat.h>
#include <unistd.h>
#include <fstream>
#include <iostream>
#include <limits>
#include <map>
#include <optional>

using namespace cohere2c;

namespace {

constexpr int64_t kInt64Max = std::numeric_limits<int64_t>::max();

/// The finite numbers for which `ok` holds, described by `what`; one range
/// serves an option and the requests file's field alike.
struct NumberRange {
  const char *what;
  bool (*ok)(double);
  bool holds(double v) const { return std::isfinite(v) && ok(v); }
};
constexpr NumberRange kTemperatureRange{"a number >= 0", [](double t) { return t >= 0; }};
constexpr NumberRange kTopPRange{"a number in (0, 1]",
                                 [](double p) { return p > 0 && p <= 1; }};

/// A number in `range`. CLI::Range lets NaN through, and a double option
/// takes "inf".
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

/// A decimal integer in [low, high]. CLI11 itself reads "-1" into a
/// uint64_t as 2^64 - 1 and saturates integers past the type's range.
CLI::Validator integerIn(int64_t low, int64_t high) {
  std::string what = "an integer in [" + std::to_string(low) + ", " + std::to_string(high) + "]";
  return CLI::Validator(
      [=](std::string &input) -> std::string {
        char *end = nullptr;
        errno = 0;
        long long value = std::strtoll(input.c_str(), &end, 10);
        if (input.empty() || std::isspace((unsigned char)input[0]) || *end != '\0' ||
            errno == ERANGE || value < low || value > high)
          return "Value " + input + " is not " + what;
        return "";
      },
      what);
}

/// A decimal integer in [0, 2^64 - 1] (seeds).
const CLI::Validator kUint64(
    [](std::string &input) -> std::string {
      char *end = nullptr;
      errno = 0;
      std::strtoull(input.c_str(), &end, 10);
      if (input.empty() || !std::isdigit((unsigned char)input[0]) || *end != '\0' ||
          errno == ERANGE)
        return "Value " + input + " is not an integer in [0, 2^64 - 1]";
      return "";
    },
    "UINT64");

int fail(const std::string &message) {
  std::cerr << "cohere2c-run: error: " << message << "\n";
  return 1;
}

/// "5,17,33": decimal ids separated by commas, nothing else (no spaces, no
/// empty items).
StatusOr<std::vector<int32_t>> parseIds(const std::string &text) {
  std::vector<int32_t> ids;
  for (size_t begin = 0; !text.empty() && begin <= text.size();) {
    size_t end = std::min(text.find(',', begin), text.size());
    std::string item = text.substr(begin, end - begin);
    char *stop = nullptr;
    long long v = std::strtoll(item.c_str(), &stop, 10);
    if (item.empty() || std::isspace((unsigned char)item[0]) || *stop != '\0' ||
        v < INT32_MIN || v > INT32_MAX)
      return Status::error("--prompt-ids: '" + item + "' is not a token id");
    ids.push_back((int32_t)v);
    begin = end + 1;
  }
  return ids;
}

/// `value` if it is an integer in [low, high].
std::optional<int64_t> integerIn(const nlohmann::json &value, int64_t low,
                                 int64_t high) {
  if (value.is_number_unsigned())
    return value.get<uint64_t>() <= (uint64_t)high
               ? std::optional<int64_t>(value.get<uint64_t>())
               : std::nullopt;
  if (!value.is_number_integer() || value.get<int64_t>() < low ||
      value.get<int64_t>() > high)
    return std::nullopt;
  return value.get<int64_t>();
}

/// The end of a request's logits rows: rows exist for positions
/// [0, P + N - 1) (the last generated token is never fed back). N may be as
/// large as int64 allows: saturated.
int64_t logitsRowsEnd(const Request &r) {
  int64_t prompt = r.promptIds.size();
  return r.maxNewTokens - 1 > kInt64Max - prompt ? kInt64Max : prompt + r.maxNewTokens - 1;
}

/// One request per line: {"id": ..., "prompt_ids": [...], "max_new_tokens":
/// N, "logits_from": F, "temperature": T, "top_k": K, "top_p": P, "seed":
/// S}; only prompt_ids is required, a request without an id is named
/// "line-<its line number>", and the sampling fields default to the
/// command line's (so requests that should sample differently need their
/// own seeds). With --logits-dir, the request's
/// file holds the logits rows of positions [F, P + N - 1) (default F = 0;
/// F = P + N - 1 records none, for a request only timed); without it F is
/// checked and unused. Errors name the file and the line: not a JSON object,
/// an unknown field, a field of the wrong type or range, an id used twice. A
/// file that cannot be read or holds no request is an error.
StatusOr<std::vector<Request>> readRequests(const std::string &path,
                                            const Request &defaults) {
  std::ifstream in(path);
  if (!in)
    return Status::error(path + ": cannot open (" + std::strerror(errno) + ")");
  // A device such as /dev/zero would be read forever, never ending a line.
  struct stat info;
  if (stat(path.c_str(), &info) == 0 && (S_ISCHR(info.st_mode) || S_ISBLK(info.st_mode)))
    return Status::error(path + ": a device, not a file of requests");
  std::vector<Request> requests;
  std::map<std::string, int> lineOfId;
  std::string line;
  for (int lineNo = 1; std::getline(in, line); ++lineNo) {
    if (line.find_first_not_of(" \t\r") == std::string::npos)
      continue;
    std::string where = path + ":" + std::to_string(lineNo);
    auto j = nlohmann::json::parse(line, nullptr, false);
    if (j.is_discarded() || !j.is_object())
      return Status::error(where + ": not a JSON object");
    static const char *kFields[] = {"id",          "prompt_ids", "max_new_tokens",
                                    "logits_from", "temperature", "top_k",
                                    "top_p",       "seed"};
    for (auto &field : j.items())
      if (std::find(std::begin(kFields), std::end(kFields), field.key()) == std::end(kFields))
        return Status::error(where + ": unknown field '" + field.key() +
                             "' (expected id, prompt_ids, max_new_tokens, "
                             "logits_from, temperature, top_k, top_p, seed)");
    Request r = defaults;
    r.id = !j.contains("id")     ? "line-" + std::to_string(lineNo)
           : j["id"].is_string() ? j["id"].get<std::string>()
                                 : j["id"].dump();
    auto [previous, isNew] = lineOfId.emplace(r.id, lineNo);
    if (!isNew)
      return Status::error(where + ": request id '" + r.id +
                           "' is already used on line " +
                           std::to_string(previous->second));
    if (!j.contains("prompt_ids") || !j["prompt_ids"].is_array())
      return Status::error(where + ": prompt_ids must be an array of ids");
    const nlohmann::json &promptIds = j["prompt_ids"];
    for (size_t i = 0; i < promptIds.size(); ++i) {
      std::optional<int64_t> id = integerIn(promptIds[i], INT32_MIN, INT32_MAX);
      if (!id)
        return Status::error(where + ": prompt_ids[" + std::to_string(i) +
                             "] is " + promptIds[i].dump() +
                             ", not a token id (an int32 integer)");
      r.promptIds.push_back((int32_t)*id);
    }
    if (j.contains("max_new_tokens")) {
      std::optional<int64_t> n = integerIn(j["max_new_tokens"], 1, kInt64Max);
      if (!n)
        return Status::error(where +
                             ": max_new_tokens must be an integer of "
                             "at least 1, found " +
                             j["max_new_tokens"].dump());
      r.maxNewTokens = *n;
    }
    if (j.contains("logits_from")) {
      // F = P + N - 1 asks for no row.
      int64_t end = logitsRowsEnd(r);
      std::optional<int64_t> from = integerIn(j["logits_from"], 0, end);
      if (!from)
        return Status::error(where +
                             ": logits_from must be an integer in [0, prompt "
                             "tokens + max_new_tokens - 1] = [0, " +
                             std::to_string(end) + "], found " +
                             j["logits_from"].dump());
      r.recordLogitsFrom = *from;
    }
    // Sampling, with the command line's ranges.
    auto number = [&](const char *key, NumberRange range) -> StatusOr<std::optional<double>> {
      if (!j.contains(key))
        return std::optional<double>();
      if (!j[key].is_number() || !range.holds(j[key].get<double>()))
        return Status::error(where + ": " + key + " must be " + range.what + ", found " +
                             j[key].dump());
      return std::optional<double>(j[key].get<double>());
    };
    auto temperature = number("temperature", kTemperatureRange);
    if (!temperature.ok())
      return temperature.status();
    if (*temperature)
      r.sampling.temperature = **temperature;
    auto topP = number("top_p", kTopPRange);
    if (!topP.ok())
      return topP.status();
    if (*topP)
      r.sampling.topP = **topP;
    if (j.contains("top_k")) {
      std::optional<int64_t> k = integerIn(j["top_k"], 0, kInt64Max);
      if (!k)
        return Status::error(where + ": top_k must be an integer >= 0, found " +
                             j["top_k"].dump());
      r.sampling.topK = *k;
    }
    if (j.contains("seed")) {
      const nlohmann::json &seed = j["seed"];
      if (!seed.is_number_unsigned() &&
          !(seed.is_number_integer() && seed.get<int64_t>() >= 0))
        return Status::error(where + ": seed must be an integer >= 0 (uint64), found " +
                             seed.dump());
      r.sampling.seed = seed.get<uint64_t>();
    }
    requests.push_back(std::move(r));
  }
  if (in.bad())
    return Status::error(path + ": cannot read (" + std::strerror(errno) + ")");
  if (requests.empty())
    return Status::error(path + ": no requests");
  return requests;
}

/// Whether `a` and `b` name one existing file.
bool sameFile(const std::string &a, const std::string &b) {
  struct stat x, y;
  return stat(a.c_str(), &x) == 0 && stat(b.c_str(), &y) == 0 && x.st_dev == y.st_dev &&
         x.st_ino == y.st_ino;
}

/// Where --logits-out writes. A regular file (or a new one) is replaced at
/// the end by a temporary file of its folder renamed over it, so that a run
/// that fails leaves it as it was and no reader sees half a file; anything
/// else (/dev/stdout, a FIFO) is written through. Symbolic links are
/// followed.
struct LogitsTarget {
  std::string given; // the path as given, for messages
  std::string path;  // the file written: `given`, or what its links name
  bool replace = true;

  /// Refuses an empty path, a folder, one of the run's `inputs` (artifact,
  /// weights, checkpoint files), and what cannot be written: the file
  /// itself where it is not replaced, else its folder.
  static StatusOr<LogitsTarget> of(const std::string &given,
                                   const std::vector<std::string> &inputs) {
    auto error = [&](const std::string &why) {
      return Status::error("--logits-out: " + given + ": " + why);
    };
    if (given.empty())
      return Status::error("--logits-out: the path is empty");
    for (const std::string &input : inputs)
      if (sameFile(given, input))
        return error("the run's input " + input);
    LogitsTarget t{given, given, true};
    struct stat info;
    if (stat(given.c_str(), &info) == 0) {
      if (S_ISDIR(info.st_mode))
        return error("cannot write (a folder)");
      if (!S_ISREG(info.st_mode)) {
        t.replace = false;
        if (access(given.c_str(), W_OK) != 0)
          return error(std::string("cannot write (") + std::strerror(errno) + ")");
        return t;
      }
      std::error_code ec;
      t.path = std::filesystem::canonical(given, ec).string();
      if (ec)
        return error("cannot resolve (" + ec.message() + ")");
    }
    if (access(t.folder().c_str(), W_OK) != 0)
      return error(std::string("cannot write (") + std::strerror(errno) + ")");
    return t;
  }

  std::string folder() const {
    std::string f = std::filesystem::path(path).parent_path().string();
    return f.empty() ? "." : f;
  }

  Status write(const std::vector<F32Tensor> &tensors) const {
    if (!replace) {
      std::ofstream out(path, std::ios::binary);
      if (!out)
        return Status::error("--logits-out: " + given + ": cannot write (" +
                             std::strerror(errno) + ")");
      return writeSafeTensors(out, given, tensors);
    }
    std::string temp = folder() + "/.cohere2c-logits-XXXXXX";
    int fd = mkstemp(temp.data());
    if (fd < 0)
      return Status::error("--logits-out: " + given + ": cannot write beside it (" +
                           std::strerror(errno) + ")");
    mode_t mask = umask(0);
    umask(mask);
    fchmod(fd, 0666 & ~mask); // as a newly created file, not mkstemp's 0600
    close(fd);
    std::ofstream out(temp, std::ios::binary);
    Status written = out ? writeSafeTensors(out, given, tensors)
                         : Status::error("--logits-out: " + given + ": cannot write (" +
                                         std::strerror(errno) + ")");
    out.close();
    if (written.ok() && std::rename(temp.c_str(), path.c_str()) != 0)
      written = Status::error("--logits-out: " + given + ": cannot replace (" +
                              std::strerror(errno) + ")");
    if (!written.ok())
      std::remove(temp.c_str());
    return written;
  }
};

std::string defaultWeightsPath(const std::string &artifact) {
  size_t dot = artifact.rfind('.');
  size_t slash = artifact.rfind('/');
  std::string stem = (dot != std::string::npos &&
                      (slash == std::string::npos || dot > slash))
                         ? artifact.substr(0, dot)
                         : artifact;
  return stem + ".weights";
}

} // namespace

int main(int argc, char **argv) {
  CLI::App app{"cohere2c-run: load a compiled Cohere2 model and generate.\n"
               "  cohere2c-run tiny.so --prompt-ids 5,17,33 --max-new-tokens 24\n"
               "  cohere2c-run tiny.so --requests requests.jsonl --max-batch 8"};
  std::string artifactPath, promptText, requestsPath, logitsOut, checkpoint;
  std::optional<uint64_t> randomSeed;
  Request defaults;
  EngineOptions options;
  bool noPrefixCache = false;
  app.add_option("artifact", artifactPath, "OUT.so from cohere2c-compile")->required();
  auto *prompt = app.add_option("--prompt-ids", promptText,
                                "comma-separated prompt token ids");
  auto *reqs =
      app.add_option("--requests", requestsPath,
                     "JSONL file: {\"id\", \"prompt_ids\", \"max_new_tokens\", "
                     "\"logits_from\", \"temperature\", \"top_k\", \"top_p\", \"seed\"} "
                     "per line (only prompt_ids is required; a request's own sampling "
                     "values win over the options)");
  prompt->excludes(reqs);
  app.add_option("--max-new-tokens", defaults.maxNewTokens,
                 "tokens to generate (a request's own value wins)")
      ->check(integerIn(int64_t(1), kInt64Max))
      ->capture_default_str();
  auto *logitsOption = app.add_option(
      "--logits-out", logitsOut,
      "with --prompt-ids: write logits [P + N - 1 - FROM, vocab] F32 here");
  std::string logitsDir;
  auto *logitsDirOption = app.add_option(
      "--logits-dir", logitsDir,
      "with --requests: write each request's logits to DIR/<id>.safetensors "
      "(tensors logits [rows, vocab] F32 and first_row [1], the sequence "
      "position of its first row: the request's logits_from, default 0, or "
      "later where positions before it came from the cache)");
  int64_t logitsFrom = 0;
  app.add_option("--logits-from", logitsFrom,
                 "with --logits-out: the first row written (e.g. P - 1 for the "
                 "last prompt position only)")
      ->needs(logitsOption)
      ->check(integerIn(0, kInt64Max))
      ->capture_default_str();
  app.add_flag("--ignore-eos", options.ignoreEos, "keep generating past EOS");
  auto *ckpt = app.add_option("--checkpoint", checkpoint,
                              "bind weights from a Hugging Face checkpoint folder");
  app.add_option("--random-weights", randomSeed, "bind seeded random weights")
      ->check(kUint64)
      ->excludes(ckpt);
  app.add_option("--prefill-chunk", options.prefillChunk,
                 "most prompt tokens per step (0: whole prompt)")
      ->check(integerIn(int64_t(0), kInt64Max))
      ->capture_default_str();
  app.add_option("--block-size", options.blockSize, "tokens per KV block")
      ->check(integerIn(int64_t(1), int64_t(1) << 16))
      ->capture_default_str();
  app.add_option("--kv-blocks", options.numBlocks,
                 "blocks per KV group (0: room for --max-batch full contexts, "
                 "at most 4 GiB of KV cache on the host target)")
      ->check(integerIn(int64_t(0), (int64_t(1) << 31) - 1))
      ->capture_default_str();
  app.add_option("--max-batch", options.maxBatch, "most requests in flight")
      ->check(integerIn(int64_t(1), int64_t(1) << 16))
      ->capture_default_str();
  app.add_flag("--no-prefix-cache", noPrefixCache, "never reuse cached prefixes");
  app.add_option("--temperature", defaults.sampling.temperature, "0: greedy")
      ->check(finiteNumber(kTemperatureRange))
      ->capture_default_str();
  app.add_option("--top-k", defaults.sampling.topK, "0: all")
      ->check(integerIn(int64_t(0), kInt64Max))
      ->capture_default_str();
  app.add_option("--top-p", defaults.sampling.topP, "1: all")
      ->check(finiteNumber(kTopPRange))
      ->capture_default_str();
  app.add_option("--seed", defaults.sampling.seed, "sampling seed")
      ->check(kUint64)
      ->capture_default_str();
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError &e) {
    // --help exits 0 with the usage; any other parse error is an error like
    // the others: the tool's prefix, exit status 1.
    if (e.get_exit_code() == 0)
      return app.exit(e);
    return fail(e.what());
  }
  options.prefixCache = !noPrefixCache;

  bool promptMode = prompt->count() > 0;
  if (!promptMode && requestsPath.empty())
    return fail("give --prompt-ids or --requests");
  bool writeLogits = logitsOption->count() > 0;
  if (writeLogits && !requestsPath.empty())
    return fail("--logits-out needs --prompt-ids (with --requests: --logits-dir)");
  bool writeRequestLogits = logitsDirOption->count() > 0;
  if (writeRequestLogits && requestsPath.empty())
    return fail("--logits-dir needs --requests");
  if (writeRequestLogits) {
    struct stat info;
    if (stat(logitsDir.c_str(), &info) != 0 || access(logitsDir.c_str(), W_OK) != 0)
      return fail("--logits-dir: " + logitsDir + ": not a writable folder (" +
                  std::strerror(errno) + ")");
    if (!S_ISDIR(info.st_mode))
      return fail("--logits-dir: " + logitsDir + ": not a folder");
  }
  // Checked now, without touching the file: a path that cannot be written
  // fails before generating.
  LogitsTarget logitsTarget;
  if (writeLogits) {
    std::vector<std::string> inputs = {artifactPath, defaultWeightsPath(artifactPath)};
    std::error_code ec;
    if (!checkpoint.empty())
      for (const auto &entry : std::filesystem::directory_iterator(checkpoint, ec))
        inputs.push_back(entry.path().string());
    auto target = LogitsTarget::of(logitsOut, inputs);
    if (!target.ok())
      return fail(target.status().message());
    logitsTarget = *target;
  }

  auto artifact = LoadedArtifact::load(artifactPath);
  if (!artifact.ok())
    return fail(artifact.status().message());
  const Manifest &manifest = (*artifact)->manifest();

  std::vector<Request> requests;
  if (promptMode) {
    auto ids = parseIds(promptText);
    if (!ids.ok())
      return fail(ids.status().message());
    Request r = defaults;
    r.id = "prompt";
    r.promptIds = *ids;
    int64_t end = logitsRowsEnd(r);
    if (logitsFrom > end)
      return fail("--logits-from must be at most prompt tokens + max_new_tokens - 1 = " +
                  std::to_string(end) + ", found " + std::to_string(logitsFrom));
    r.recordLogits = writeLogits;
    r.recordLogitsFrom = logitsFrom;
    requests.push_back(r);
  } else {
    auto read = readRequests(requestsPath, defaults);
    if (!read.ok())
      return fail(read.status().message());
    requests = std::move(*read);
    for (Request &r : requests) {
      if (!writeRequestLogits)
        break;
      bool fileName = !r.id.empty() && r.id[0] != '.' &&
                      r.id.find_first_not_of("abcdefghijklmnopqrstuvwxyz"
                                             "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-") ==
                          std::string::npos;
      if (!fileName)
        return fail("--logits-dir: request id '" + r.id +
                    "' cannot name a file (letters, digits, '.', '_', '-')");
      // logits_from = P + N - 1 asks for no row.
      r.recordLogits = r.recordLogitsFrom < logitsRowsEnd(r);
    }
  }

  StatusOr<std::unique_ptr<WeightBuffer>> weights =
      !checkpoint.empty() ? WeightBuffer::fromCheckpoint(checkpoint, manifest)
      : randomSeed        ? WeightBuffer::random(*randomSeed, manifest)
                          : WeightBuffer::fromWeightsFile(
                                defaultWeightsPath(artifactPath), manifest);
  if (!weights.ok())
    return fail(weights.status().message());

  if (options.numBlocks == 0)
    options.numBlocks = defaultKVBlocks(manifest, options);
  std::array<int64_t, kNumKVGroups> blocks = {options.numBlocks, options.numBlocks};
  std::unique_ptr<Executor> executor;
  if (manifest.target == "cuda") {
    auto created = CudaExecutor::create(**artifact, **weights, blocks, options.blockSize);
    if (!created.ok())
      return fail(created.status().message());
    std::fprintf(stderr, "device: %s\n", (*created)->deviceName().c_str());
    executor = std::move(*created);
  } else {
    auto created = HostExecutor::create(**artifact, **weights, blocks, options.blockSize);
    if (!created.ok())
      return fail(created.status().message());
    executor = std::move(*created);
  }
  auto engine = Engine::create(*executor, manifest, options);
  if (!engine.ok())
    return fail(engine.status().message());

  bool jsonl = !requestsPath.empty();
  Status logitsWritten = Status::success();
  auto results = (*engine)->run(requests, [&](const RequestResult &r) {
    if (!jsonl)
      return;
    if (writeRequestLogits && logitsWritten.ok()) {
      std::string path = logitsDir + "/" + r.id + ".safetensors";
      std::ofstream file(path, std::ios::binary);
      int64_t vocab = manifest.config.vocabSize;
      float firstRow = (float)r.firstLogitsRow;
      logitsWritten = writeSafeTensors(
          file, path,
          {{"logits", {(int64_t)r.logits.size() / vocab, vocab}, r.logits.data()},
           {"first_row", {1}, &firstRow}});
    }
    nlohmann::json line = {{"id", r.id},
                           {"generated_ids", r.generatedIds},
                           {"cached_tokens", r.cachedTokens},
                           {"ttft_ms", r.ttftMs},
                           {"total_ms", r.totalMs}};
    std::cout << line.dump() << std::endl;
  });
  if (!results.ok())
    return fail(results.status().message());
  if (!logitsWritten.ok())
    return fail(logitsWritten.message());

  if (!jsonl) {
    const RequestResult &r = results->front();
    for (size_t i = 0; i < r.generatedIds.size(); ++i)
      std::cout << (i ? " " : "") << r.generatedIds[i];
    std::cout << "\n";
    if (writeLogits) {
      int64_t vocab = manifest.config.vocabSize;
      Status written = logitsTarget.write(
          {{"logits", {(int64_t)r.logits.size() / vocab, vocab}, r.logits.data()}});
      if (!written.ok())
        return fail(written.message());
    }
  }
  const EngineStats &stats = (*engine)->stats();
  std::fprintf(stderr,
               "prefill: %lld tokens in %.2f ms; decode: %lld tokens in %.2f ms "
               "(%.1f tokens/s); steps %lld, preemptions %lld\n"
               "kv cache: peak %.2f MiB in use (block size %lld, %lld blocks per group)\n",
               (long long)stats.prefillTokens, stats.prefillMs,
               (long long)stats.decodeTokens, stats.decodeMs,
               stats.decodeMs > 0 ? stats.decodeTokens * 1000.0 / stats.decodeMs : 0.0,
               (long long)stats.steps, (long long)stats.preemptions,
               stats.peakKVBytes / 1048576.0, (long long)options.blockSize,
               (long long)options.numBlocks);
  return 0;
}
