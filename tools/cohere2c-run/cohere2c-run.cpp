//===- cohere2c-run.cpp - Load a compiled model and generate --------------===//
//
//   cohere2c-run model.so --chat "What is cruft?" --max-new-tokens 32
//   cohere2c-run model.so --prompt "In the beginning"
//   cohere2c-run tiny.so --prompt-ids 5,17,33 --max-new-tokens 24
//   cohere2c-run tiny.so --requests requests.jsonl --max-batch 8
//   cohere2c-run model.so --perplexity heldout.jsonl
//
// stdout: the answer as text while it is generated (--prompt, --chat), the
// generated ids on one line (--prompt-ids, --print-ids), one JSON line per
// finished request (--requests), or the perplexity as one JSON line
// (--perplexity); stderr: timings and KV-cache use.
//
//===----------------------------------------------------------------------===//

#include "Artifact.h"
#include "LogitsTarget.h"
#include "ModelLoading.h"
#include "Perplexity.h"
#include "RequestsFile.h"
#include "Weights.h"
#include "scheduler/Engine.h"
#include "text/ModelText.h"

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <cctype>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <optional>
#include <sys/stat.h>
#include <unistd.h>

using namespace cohere2c;

namespace {

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
      if (input.empty() || !std::isdigit((unsigned char)input[0]) ||
          *end != '\0' || errno == ERANGE)
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

/// The command line.
struct Options {
  std::string artifact, promptIds, prompt, chat, system, requests, perplexity;
  std::string logitsOut, logitsDir, checkpoint;
  std::optional<uint64_t> randomSeed;
  int64_t logitsFrom = 0;
  bool printIds = false, noPrefixCache = false;
  Request defaults;
  EngineOptions engine;
  /// Which options were given (CLI11's counts, read after parsing).
  bool hasPromptIds = false, hasPrompt = false, hasChat = false,
       hasSystem = false;
  bool hasLogitsOut = false, hasLogitsDir = false;

  bool textPrompt() const { return hasPrompt || hasChat; }
  bool single() const { return hasPromptIds || textPrompt(); }
};

void addPromptOptions(CLI::App &app, Options &o) {
  app.add_option("artifact", o.artifact, "OUT.so from cohere2c-compile")
      ->required();
  auto *ids = app.add_option("--prompt-ids", o.promptIds,
                             "comma-separated prompt token ids");
  auto *prompt =
      app.add_option("--prompt", o.prompt,
                     "prompt text (the BOS added as the tokenizer adds it)");
  auto *chat =
      app.add_option("--chat", o.chat,
                     "a user message, rendered with the model's chat template");
  app.add_option("--system", o.system,
                 "with --chat: a system message before it")
      ->needs(chat);
  auto *requests =
      app.add_option("--requests", o.requests,
                     "JSONL file: {\"id\", \"prompt_ids\" | \"prompt\" | "
                     "\"messages\", \"documents\", "
                     "\"tools\", \"max_new_tokens\", \"logits_from\", "
                     "\"temperature\", \"top_k\", "
                     "\"top_p\", \"seed\"} per line (a request's own sampling "
                     "values win over the options)");
  auto *perplexity = app.add_option(
      "--perplexity", o.perplexity,
      "JSONL file: {\"ids\": [...]} or {\"text\": ...} per line; prints the "
      "perplexity (teacher forced, prompt steps only, no prefix reuse)");
  for (CLI::Option *a : {ids, prompt, chat, requests, perplexity})
    for (CLI::Option *b : {ids, prompt, chat, requests, perplexity})
      if (a != b)
        a->excludes(b);
  app.add_flag("--print-ids", o.printIds, "print the generated ids, not text");
  app.add_option("--max-new-tokens", o.defaults.maxNewTokens,
                 "tokens to generate (a request's own value wins)")
      ->check(integerIn(int64_t(1), kInt64Max))
      ->capture_default_str();
  app.add_flag("--ignore-eos", o.engine.ignoreEos,
               "keep generating past the EOS ids");
}

void addOutputOptions(CLI::App &app, Options &o) {
  auto *logitsOut = app.add_option(
      "--logits-out", o.logitsOut,
      "with one prompt: write logits [P + N - 1 - FROM, vocab] F32 here");
  app.add_option(
      "--logits-dir", o.logitsDir,
      "with --requests: write each request's logits to DIR/<id>.safetensors "
      "(tensors logits [rows, vocab] F32 and first_row [1], the sequence "
      "position of its first row: the request's logits_from, default 0, or "
      "later where positions before it came from the cache)");
  app.add_option("--logits-from", o.logitsFrom,
                 "with --logits-out: the first row written (e.g. P - 1 for the "
                 "last prompt position only)")
      ->needs(logitsOut)
      ->check(integerIn(0, kInt64Max))
      ->capture_default_str();
}

void addEngineOptions(CLI::App &app, Options &o) {
  auto *ckpt =
      app.add_option("--checkpoint", o.checkpoint,
                     "bind weights from a Hugging Face checkpoint folder");
  app.add_option("--random-weights", o.randomSeed, "bind seeded random weights")
      ->check(kUint64)
      ->excludes(ckpt);
  app.add_option("--prefill-chunk", o.engine.prefillChunk,
                 "most prompt tokens per step (0: whole prompt)")
      ->check(integerIn(int64_t(0), kInt64Max))
      ->capture_default_str();
  app.add_option("--block-size", o.engine.blockSize, "tokens per KV block")
      ->check(integerIn(int64_t(1), int64_t(1) << 16))
      ->capture_default_str();
  app.add_option("--kv-blocks", o.engine.numBlocks,
                 "blocks per KV group (0: room for --max-batch full contexts, "
                 "at most 4 GiB of KV cache on the host target)")
      ->check(integerIn(int64_t(0), (int64_t(1) << 31) - 1))
      ->capture_default_str();
  app.add_option("--max-batch", o.engine.maxBatch, "most requests in flight")
      ->check(integerIn(int64_t(1), int64_t(1) << 16))
      ->capture_default_str();
  app.add_flag("--no-prefix-cache", o.noPrefixCache,
               "never reuse cached prefixes");
}

void addSamplingOptions(CLI::App &app, Options &o) {
  app.add_option("--temperature", o.defaults.sampling.temperature, "0: greedy")
      ->check(finiteNumber(kTemperatureRange))
      ->capture_default_str();
  app.add_option("--top-k", o.defaults.sampling.topK, "0: all")
      ->check(integerIn(int64_t(0), kInt64Max))
      ->capture_default_str();
  app.add_option("--top-p", o.defaults.sampling.topP, "1: all")
      ->check(finiteNumber(kTopPRange))
      ->capture_default_str();
  app.add_option("--seed", o.defaults.sampling.seed, "sampling seed")
      ->check(kUint64)
      ->capture_default_str();
}

/// Combinations CLI11 does not check, and the output folders.
Status checkOptions(const Options &o) {
  if (!o.single() && o.requests.empty() && o.perplexity.empty())
    return Status::error(
        "give --prompt, --chat, --prompt-ids, --requests or --perplexity");
  if (o.hasLogitsOut && !o.single())
    return Status::error(
        "--logits-out needs one prompt (with --requests: --logits-dir)");
  if (o.hasLogitsDir && o.requests.empty())
    return Status::error("--logits-dir needs --requests");
  if (o.hasLogitsDir) {
    struct stat info;
    if (stat(o.logitsDir.c_str(), &info) != 0 ||
        access(o.logitsDir.c_str(), W_OK) != 0)
      return Status::error("--logits-dir: " + o.logitsDir +
                           ": not a writable folder (" + std::strerror(errno) +
                           ")");
    if (!S_ISDIR(info.st_mode))
      return Status::error("--logits-dir: " + o.logitsDir + ": not a folder");
  }
  return Status::success();
}

/// Parses the command line into `o`; an exit status when the tool is done
/// (--help: 0; a parse error: 1, with the tool's prefix like every error).
std::optional<int> parseOptions(int argc, char **argv, Options &o) {
  CLI::App app{
      "cohere2c-run: load a compiled Cohere2 model and generate.\n"
      "  cohere2c-run model.so --chat \"What is cruft?\" --max-new-tokens 32\n"
      "  cohere2c-run tiny.so --prompt-ids 5,17,33 --max-new-tokens 24\n"
      "  cohere2c-run tiny.so --requests requests.jsonl --max-batch 8"};
  addPromptOptions(app, o);
  addOutputOptions(app, o);
  addEngineOptions(app, o);
  addSamplingOptions(app, o);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError &e) {
    if (e.get_exit_code() == 0)
      return app.exit(e);
    return fail(e.what());
  }
  o.hasPromptIds = app.count("--prompt-ids") > 0;
  o.hasPrompt = app.count("--prompt") > 0;
  o.hasChat = app.count("--chat") > 0;
  o.hasSystem = app.count("--system") > 0;
  o.hasLogitsOut = app.count("--logits-out") > 0;
  o.hasLogitsDir = app.count("--logits-dir") > 0;
  o.engine.prefixCache = !o.noPrefixCache;
  Status checked = checkOptions(o);
  if (!checked.ok())
    return fail(checked.message());
  return std::nullopt;
}

/// The one request of --prompt-ids, --prompt or --chat.
StatusOr<Request> singleRequest(const Options &o, const text::ModelText *text) {
  Request r = o.defaults;
  r.id = "prompt";
  StatusOr<std::vector<int32_t>> ids = Status::error("");
  if (o.hasPromptIds) {
    ids = parseIds(o.promptIds);
  } else if (!text) {
    return Status::error(
        std::string(o.hasChat ? "--chat" : "--prompt") +
        " needs the model's tokenizer, and " + o.artifact +
        " carries none (compiled from a config alone): give --prompt-ids, "
        "or compile from a checkpoint folder with tokenizer.json");
  } else if (o.hasPrompt) {
    ids = text->encodePrompt(o.prompt);
  } else {
    nlohmann::ordered_json messages = nlohmann::ordered_json::array();
    if (o.hasSystem)
      messages.push_back({{"role", "system"}, {"content", o.system}});
    messages.push_back({{"role", "user"}, {"content", o.chat}});
    ids = text->encodeChat({{"messages", messages}},
                           /*addGenerationPrompt=*/true);
  }
  if (!ids.ok())
    return Status::error((o.hasChat     ? "--chat: "
                          : o.hasPrompt ? "--prompt: "
                                        : "") +
                         ids.status().message());
  r.promptIds = *ids;
  int64_t end = logitsRowsEnd(r);
  if (o.logitsFrom > end)
    return Status::error(
        "--logits-from must be at most prompt tokens + max_new_tokens - 1 = " +
        std::to_string(end) + ", found " + std::to_string(o.logitsFrom));
  r.recordLogits = o.hasLogitsOut;
  r.recordLogitsFrom = o.logitsFrom;
  return r;
}

/// The requests of --requests, checked against --logits-dir.
StatusOr<std::vector<Request>> fileRequests(const Options &o,
                                            const text::ModelText *text) {
  auto requests = readRequests(o.requests, o.defaults, text);
  if (!requests.ok() || !o.hasLogitsDir)
    return requests;
  for (Request &r : *requests) {
    bool fileName =
        !r.id.empty() && r.id[0] != '.' &&
        r.id.find_first_not_of("abcdefghijklmnopqrstuvwxyz"
                               "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-") ==
            std::string::npos;
    if (!fileName)
      return Status::error(
          "--logits-dir: request id '" + r.id +
          "' cannot name a file (letters, digits, '.', '_', '-')");
    // logits_from = P + N - 1 asks for no row.
    r.recordLogits = r.recordLogitsFrom < logitsRowsEnd(r);
  }
  return requests;
}

/// --logits-out, checked now without touching the file: a path that cannot
/// be written fails before generating.
StatusOr<LogitsTarget> logitsTargetOf(const Options &o) {
  std::vector<std::string> inputs = {o.artifact,
                                     defaultWeightsPath(o.artifact)};
  std::error_code ec;
  if (!o.checkpoint.empty())
    for (const auto &entry :
         std::filesystem::directory_iterator(o.checkpoint, ec))
      inputs.push_back(entry.path().string());
  return LogitsTarget::of(o.logitsOut, inputs);
}

/// Prints one request's answer as text while it is generated: whole UTF-8
/// characters only, special tokens skipped, flushed at every token.
class TextStream {
public:
  explicit TextStream(const text::Tokenizer &tokenizer)
      : decoder_(tokenizer, /*skipSpecialTokens=*/true) {}
  Status push(int32_t token) {
    auto piece = decoder_.push(token);
    if (!piece.ok())
      return piece.status();
    std::cout << *piece << std::flush;
    return Status::success();
  }
  void finish() { std::cout << decoder_.finish() << std::endl; }

private:
  text::IncrementalDecoder decoder_;
};

/// The generated ids on one line.
void printIds(const std::vector<int32_t> &ids) {
  for (size_t i = 0; i < ids.size(); ++i)
    std::cout << (i ? " " : "") << ids[i];
  std::cout << "\n";
}

/// Serves the one request, printing its answer; writes --logits-out.
Status serveSingle(Engine &engine, const Request &r, const Options &o,
                   const text::ModelText *text,
                   const LogitsTarget &logitsTarget, int64_t vocab) {
  std::optional<TextStream> stream;
  if (o.textPrompt() && !o.printIds)
    stream.emplace(text->tokenizer());
  Status streamed = Status::success();
  RunCallbacks callbacks;
  if (stream)
    callbacks.onToken = [&](const RequestResult &, int32_t token) {
      if (streamed.ok())
        streamed = stream->push(token);
    };
  auto results = engine.run({r}, callbacks);
  if (!results.ok())
    return results.status();
  if (!streamed.ok())
    return streamed;
  const RequestResult &result = results->front();
  if (stream)
    stream->finish();
  else
    printIds(result.generatedIds);
  if (!o.hasLogitsOut)
    return Status::success();
  return logitsTarget.write({{"logits",
                              {(int64_t)result.logits.size() / vocab, vocab},
                              result.logits.data()}});
}

/// Serves --requests, one JSON line per finished request (with its text
/// when the model has a tokenizer); writes --logits-dir.
Status serveFile(Engine &engine, const std::vector<Request> &requests,
                 const Options &o, const text::ModelText *text, int64_t vocab) {
  Status failed = Status::success();
  RunCallbacks callbacks;
  callbacks.onFinish = [&](const RequestResult &r) {
    if (!failed.ok())
      return;
    nlohmann::json line = {{"id", r.id},
                           {"generated_ids", r.generatedIds},
                           {"cached_tokens", r.cachedTokens},
                           {"ttft_ms", r.ttftMs},
                           {"total_ms", r.totalMs}};
    if (text) {
      auto decoded =
          text->tokenizer().decode(r.generatedIds, /*skipSpecialTokens=*/true);
      if (!decoded.ok()) {
        failed = decoded.status();
        return;
      }
      line["text"] = *decoded;
    }
    std::cout << line.dump() << std::endl;
    if (!o.hasLogitsDir)
      return;
    std::string path = o.logitsDir + "/" + r.id + ".safetensors";
    std::ofstream file(path, std::ios::binary);
    float firstRow = (float)r.firstLogitsRow;
    failed = writeSafeTensors(
        file, path,
        {{"logits", {(int64_t)r.logits.size() / vocab, vocab}, r.logits.data()},
         {"first_row", {1}, &firstRow}});
  };
  auto results = engine.run(requests, callbacks);
  return results.ok() ? failed : results.status();
}

/// Serves the requests as the options ask.
Status serve(Engine &engine, const std::vector<Request> &requests,
             const Options &o, const text::ModelText *text,
             const LogitsTarget &logitsTarget, int64_t vocab) {
  if (o.single())
    return serveSingle(engine, requests.front(), o, text, logitsTarget, vocab);
  if (o.perplexity.empty())
    return serveFile(engine, requests, o, text, vocab);
  auto report = scorePerplexity(engine, requests, vocab);
  if (!report.ok())
    return report.status();
  std::cout << report->json() << std::endl;
  return Status::success();
}

void printStats(const EngineStats &stats, const EngineOptions &options) {
  std::fprintf(
      stderr,
      "prefill: %lld tokens in %.2f ms; decode: %lld tokens in %.2f ms "
      "(%.1f tokens/s); steps %lld, preemptions %lld\n"
      "kv cache: peak %.2f MiB in use (block size %lld, %lld blocks per "
      "group)\n",
      (long long)stats.prefillTokens, stats.prefillMs,
      (long long)stats.decodeTokens, stats.decodeMs,
      stats.decodeMs > 0 ? stats.decodeTokens * 1000.0 / stats.decodeMs : 0.0,
      (long long)stats.steps, (long long)stats.preemptions,
      stats.peakKVBytes / 1048576.0, (long long)options.blockSize,
      (long long)options.numBlocks);
}

/// Everything after the command line; errors end the tool with status 1.
Status runTool(Options &o) {
  LogitsTarget logitsTarget;
  if (o.hasLogitsOut) {
    auto target = logitsTargetOf(o);
    if (!target.ok())
      return target.status();
    logitsTarget = *target;
  }
  auto artifact = LoadedArtifact::load(o.artifact);
  if (!artifact.ok())
    return artifact.status();
  const Manifest &manifest = (*artifact)->manifest();
  auto text = loadText(**artifact);
  if (!text.ok())
    return text.status();
  if (*text)
    o.engine.eosTokenIds = (*text)->eosTokenIds();

  std::vector<Request> requests;
  if (o.single()) {
    auto r = singleRequest(o, text->get());
    if (!r.ok())
      return r.status();
    requests.push_back(*r);
  } else if (!o.perplexity.empty()) {
    auto read = readPerplexityFile(o.perplexity, text->get());
    if (!read.ok())
      return read.status();
    requests = std::move(*read);
    // Every logits row is scored: none may come from the cache.
    o.engine.prefixCache = false;
  } else {
    auto read = fileRequests(o, text->get());
    if (!read.ok())
      return read.status();
    requests = std::move(*read);
  }

  auto weights = loadWeights(**artifact, o.checkpoint, o.randomSeed);
  if (!weights.ok())
    return weights.status();
  auto executor = createExecutor(**artifact, **weights, o.engine);
  if (!executor.ok())
    return executor.status();
  auto engine = Engine::create(**executor, manifest, o.engine);
  if (!engine.ok())
    return engine.status();

  int64_t vocab = manifest.config.vocabSize;
  Status served =
      serve(**engine, requests, o, text->get(), logitsTarget, vocab);
  if (!served.ok())
    return served;
  printStats((*engine)->stats(), o.engine);
  return Status::success();
}

} // namespace

int main(int argc, char **argv) {
  Options options;
  if (std::optional<int> exit = parseOptions(argc, argv, options))
    return *exit;
  Status ran = runTool(options);
  return ran.ok() ? 0 : fail(ran.message());
}
