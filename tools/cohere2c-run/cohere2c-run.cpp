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

#include "Artifact/TextFiles.h"
#include "CommandLine.h"
#include "Handles.h"
#include "Interrupt.h"
#include "LogitsTarget.h"
#include "Perplexity.h"
#include "RequestsFile.h"
#include "Support/Json.h"

#include <nlohmann/json.hpp>

#include <cctype>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <optional>
#include <string>
#include <sys/stat.h>
#include <unistd.h>

using namespace cohere2c;

namespace {

constexpr const char *kTool = "cohere2c-run";

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
  bool printIds = false;
  OwnedRequest defaults;
  cohere2c_engine_options_t engine;
  /// Which options were given (CLI11's counts, read after parsing).
  bool hasPromptIds = false, hasPrompt = false, hasChat = false,
       hasSystem = false;
  bool hasLogitsOut = false, hasLogitsDir = false;
  /// When the tool started, for the "ready" line.
  std::chrono::steady_clock::time_point started = std::chrono::steady_clock::now();

  Options() { cohere2c_engine_options_initialize(&engine); }
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
                     "values win over the options)")
          ->check(nonEmpty());
  auto *perplexity = app.add_option(
      "--perplexity", o.perplexity,
      "JSONL file: {\"ids\": [...]} or {\"text\": ...} per line; prints the "
      "perplexity (teacher forced, prompt steps only, no prefix reuse)")
      ->check(nonEmpty());
  for (CLI::Option *a : {ids, prompt, chat, requests, perplexity})
    for (CLI::Option *b : {ids, prompt, chat, requests, perplexity})
      if (a != b)
        a->excludes(b);
  app.add_flag("--print-ids", o.printIds, "print the generated ids, not text");
  addIntegerOption(app, "--max-new-tokens", o.defaults.options.max_new_tokens,
                   "tokens to generate (a request's own value wins)", 1,
                   kInt64Max);
  app.add_flag("--ignore-eos", o.engine.ignore_eos,
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
  addIntegerOption(app, "--logits-from", o.logitsFrom,
                   "with --logits-out: the first row written (e.g. P - 1 for "
                   "the last prompt position only)",
                   0, kInt64Max)
      ->needs(logitsOut);
}

void addSamplingOptions(CLI::App &app, Options &o) {
  app.add_option("--temperature", o.defaults.options.temperature, "0: greedy")
      ->check(finiteNumber(kTemperatureRange))
      ->capture_default_str();
  addIntegerOption(app, "--top-k", o.defaults.options.top_k, "0: all", 0,
                   kInt64Max);
  app.add_option("--top-p", o.defaults.options.top_p, "1: all")
      ->check(finiteNumber(kTopPRange))
      ->capture_default_str();
  app.add_option("--seed", o.defaults.options.seed, "sampling seed")
      ->transform(uint64Number())
      ->capture_default_str();
}

/// Combinations CLI11 does not check, and the output folders.
Status checkOptions(const Options &o) {
  if (std::optional<std::string> error = engineOptionsError(o.engine))
    return Status::error(*error);
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
  addWeightsOptions(app, o.checkpoint, o.randomSeed);
  addEngineOptions(app, o.engine);
  addSamplingOptions(app, o);
  if (std::optional<int> exit = parseCommandLine(app, argc, argv, kTool))
    return exit;
  o.hasPromptIds = app.count("--prompt-ids") > 0;
  o.hasPrompt = app.count("--prompt") > 0;
  o.hasChat = app.count("--chat") > 0;
  o.hasSystem = app.count("--system") > 0;
  o.hasLogitsOut = app.count("--logits-out") > 0;
  o.hasLogitsDir = app.count("--logits-dir") > 0;
  Status checked = checkOptions(o);
  if (!checked.ok())
    return fail(kTool, checked.message());
  return std::nullopt;
}

/// The one request of --prompt-ids, --prompt or --chat.
StatusOr<OwnedRequest> singleRequest(const Options &o, const ModelText *text) {
  OwnedRequest r = o.defaults;
  r.id = "prompt";
  StatusOr<std::vector<int32_t>> ids = Status::error("");
  if (o.hasPromptIds) {
    ids = parseIds(o.promptIds);
  } else if (!text) {
    return Status::error(
        std::string(o.hasChat ? "--chat" : "--prompt") +
        " needs the model's tokenizer, and " + o.artifact + " carries none " +
        kNoTokenizerReason +
        ": give --prompt-ids, or compile from a checkpoint folder with "
        "tokenizer.json");
  } else if (o.hasPrompt) {
    ids = text->encode(o.prompt, /*addSpecialTokens=*/true);
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
  r.options.record_logits = o.hasLogitsOut;
  r.options.record_logits_from = o.logitsFrom;
  return r;
}

/// The files the run reads (the artifact, its weights, the checkpoint's
/// files), which no output may replace.
StatusOr<std::vector<std::string>> runInputs(const Options &o) {
  char *weights = nullptr;
  if (Status s = statusOf(
          cohere2c_artifact_default_weights_path(o.artifact.c_str(), &weights));
      !s.ok())
    return s;
  std::vector<std::string> inputs = {o.artifact, weights};
  cohere2c_free(weights);
  std::error_code ec;
  if (!o.checkpoint.empty())
    for (const auto &entry :
         std::filesystem::directory_iterator(o.checkpoint, ec))
      inputs.push_back(entry.path().string());
  return inputs;
}

constexpr const char *kLogitsFileSuffix = ".safetensors";
/// The longest id that names a --logits-dir file: NAME_MAX (255 bytes on
/// Linux) bounds the file's name, the id and kLogitsFileSuffix.
constexpr size_t kMaxLogitsId =
    255 - std::char_traits<char>::length(kLogitsFileSuffix);

/// DIR/<id>.safetensors of --logits-dir.
std::string logitsDirPath(const Options &o, const OwnedRequest &r) {
  return o.logitsDir + "/" + r.id + kLogitsFileSuffix;
}

/// The requests of --requests, checked against --logits-dir: an id must
/// name a file, and the file must be one the run may write, before
/// anything is generated.
StatusOr<std::vector<OwnedRequest>> fileRequests(const Options &o,
                                                 const ModelText *text) {
  auto requests = readRequests(o.requests, o.defaults, text);
  if (!requests.ok() || !o.hasLogitsDir)
    return requests;
  auto inputs = runInputs(o);
  if (!inputs.ok())
    return inputs.status();
  for (OwnedRequest &r : *requests) {
    bool fileName =
        !r.id.empty() && r.id[0] != '.' && r.id.size() <= kMaxLogitsId &&
        r.id.find_first_not_of("abcdefghijklmnopqrstuvwxyz"
                               "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-") ==
            std::string::npos;
    if (!fileName)
      return Status::error("--logits-dir: request id '" + excerpt(r.id) +
                           "' cannot name a file (letters, digits, '.', '_', "
                           "'-'; at most " +
                           std::to_string(kMaxLogitsId) + " of them)");
    if (auto target = LogitsTarget::of("--logits-dir", logitsDirPath(o, r),
                                       *inputs);
        !target.ok())
      return target.status();
    // logits_from = P + N - 1 asks for no row.
    r.options.record_logits = r.options.record_logits_from < logitsRowsEnd(r);
  }
  return requests;
}

/// --logits-out, checked now without touching the file: a path that cannot
/// be written fails before generating.
StatusOr<LogitsTarget> logitsTargetOf(const Options &o) {
  auto inputs = runInputs(o);
  if (!inputs.ok())
    return inputs.status();
  return LogitsTarget::of("--logits-out", o.logitsOut, *inputs);
}

/// Prints one request's answer as text while it is generated: whole UTF-8
/// characters only, special tokens skipped, flushed at every token.
class TextStream {
public:
  static StatusOr<TextStream> of(const ModelText &text) {
    cohere2c_decoder_t *decoder = nullptr;
    if (Status s = statusOf(cohere2c_decoder_create(
            text.handle(), /*skip_special_tokens=*/true, &decoder));
        !s.ok())
      return s;
    return TextStream(decoder);
  }
  Status push(int32_t token) {
    char *piece = nullptr;
    size_t length = 0;
    if (Status s = statusOf(
            cohere2c_decoder_push(decoder_.get(), token, &piece, &length));
        !s.ok())
      return s;
    std::cout.write(piece, length) << std::flush;
    cohere2c_free(piece);
    return Status::success();
  }
  Status finish() {
    char *rest = nullptr;
    size_t length = 0;
    if (Status s =
            statusOf(cohere2c_decoder_finish(decoder_.get(), &rest, &length));
        !s.ok())
      return s;
    std::cout.write(rest, length) << std::endl;
    cohere2c_free(rest);
    return Status::success();
  }

private:
  explicit TextStream(cohere2c_decoder_t *decoder) : decoder_(decoder) {}
  DecoderHandle decoder_;
};

/// The generated ids of `r`.
std::vector<int32_t> generatedIds(cohere2c_request_t *r) {
  const int32_t *ids = nullptr;
  size_t count = 0;
  cohere2c_status_free(cohere2c_request_generated_ids(r, &ids, &count));
  return std::vector<int32_t>(ids, ids + count);
}

/// The recorded logits of finished request `r`: [rows, vocab] f32 from
/// sequence position firstRow.
struct RecordedLogits {
  const float *data = nullptr;
  int64_t rows = 0, firstRow = 0;
};
StatusOr<RecordedLogits> logitsOf(cohere2c_request_t *r) {
  RecordedLogits logits;
  if (Status s = statusOf(cohere2c_request_logits(r, &logits.data, &logits.rows,
                                                  &logits.firstRow));
      !s.ok())
    return s;
  return logits;
}

/// The generated ids on one line.
void printIds(const std::vector<int32_t> &ids) {
  for (size_t i = 0; i < ids.size(); ++i)
    std::cout << (i ? " " : "") << ids[i];
  std::cout << "\n";
}

/// Serves the one request, printing its answer; writes --logits-out.
Status serveSingle(cohere2c_engine_t *engine, const ModelText *text,
                   const OwnedRequest &r, const Options &o,
                   const LogitsTarget &logitsTarget, int64_t vocab) {
  std::optional<TextStream> stream;
  if (o.textPrompt() && !o.printIds) {
    auto created = TextStream::of(*text);
    if (!created.ok())
      return created.status();
    stream.emplace(std::move(*created));
  }
  RequestCallbacks callbacks;
  if (stream)
    callbacks.onToken = [&](size_t, int32_t token) {
      return stream->push(token);
    };
  callbacks.onFinish = [&](size_t, cohere2c_request_t *result) {
    if (stream) {
      if (Status s = stream->finish(); !s.ok())
        return s;
    } else {
      printIds(generatedIds(result));
    }
    if (!o.hasLogitsOut)
      return Status::success();
    auto logits = logitsOf(result);
    if (!logits.ok())
      return logits.status();
    // Generation stopped (at an EOS) before --logits-from: the file holds
    // no row, which the user should not have to discover by reading it.
    if (logits->rows == 0)
      std::cerr << "note: --logits-out " << o.logitsOut
                << " holds no logits row: generation stopped at an EOS with "
                   "logits up to position "
                << r.promptIds.size() + generatedIds(result).size() - 2
                << ", before --logits-from " << r.options.record_logits_from
                << "\n";
    return logitsTarget.write(
        {{"logits", {logits->rows, vocab}, logits->data}});
  };
  return runRequests(engine, {r}, callbacks);
}

/// Serves --requests, one JSON line per finished request (with its text
/// when the model has a tokenizer); writes --logits-dir.
Status serveFile(cohere2c_engine_t *engine,
                 const std::vector<OwnedRequest> &requests, const Options &o,
                 const ModelText *text, int64_t vocab) {
  RequestCallbacks callbacks;
  callbacks.onFinish = [&](size_t i, cohere2c_request_t *r) {
    cohere2c_request_stats_t stats;
    if (Status s = statusOf(cohere2c_request_stats(r, &stats)); !s.ok())
      return s;
    std::vector<int32_t> ids = generatedIds(r);
    nlohmann::json line = {{"id", requests[i].id},
                           {"generated_ids", ids},
                           {"cached_tokens", stats.cached_tokens},
                           {"ttft_ms", stats.ttft_ms},
                           {"total_ms", stats.total_ms}};
    if (text) {
      auto decoded = text->decode(ids, /*skipSpecialTokens=*/true);
      if (!decoded.ok())
        return decoded.status();
      line["text"] = *decoded;
    }
    std::cout << line.dump() << std::endl;
    if (!o.hasLogitsDir)
      return Status::success();
    auto logits = logitsOf(r);
    if (!logits.ok())
      return logits.status();
    auto inputs = runInputs(o);
    if (!inputs.ok())
      return inputs.status();
    auto target =
        LogitsTarget::of("--logits-dir", logitsDirPath(o, requests[i]), *inputs);
    if (!target.ok())
      return target.status();
    float firstRow = (float)logits->firstRow;
    return target->write({{"logits", {logits->rows, vocab}, logits->data},
                          {"first_row", {1}, &firstRow}});
  };
  return runRequests(engine, requests, callbacks);
}

void printStats(cohere2c_engine_t *engine) {
  cohere2c_engine_stats_t stats;
  cohere2c_engine_options_t options;
  cohere2c_status_free(cohere2c_engine_stats(engine, &stats));
  cohere2c_status_free(cohere2c_engine_options(engine, &options));
  std::fprintf(
      stderr,
      "prefill: %lld tokens in %.2f ms; decode: %lld tokens in %.2f ms "
      "(%.1f tokens/s); steps %lld, preemptions %lld\n"
      "kv cache: peak %.2f MiB in use (block size %lld, %lld blocks)\n",
      (long long)stats.prefill_tokens, stats.prefill_ms,
      (long long)stats.decode_tokens, stats.decode_ms,
      stats.decode_ms > 0 ? stats.decode_tokens * 1000.0 / stats.decode_ms
                          : 0.0,
      (long long)stats.steps, (long long)stats.preemptions,
      stats.peak_kv_bytes / 1048576.0, (long long)options.block_size,
      (long long)options.kv_blocks);
}

/// The requests the options ask for.
StatusOr<std::vector<OwnedRequest>> requestsOf(Options &o,
                                               const ModelText *text) {
  if (o.single()) {
    auto r = singleRequest(o, text);
    if (!r.ok())
      return r.status();
    return std::vector<OwnedRequest>{*r};
  }
  if (o.perplexity.empty())
    return fileRequests(o, text);
  // Every logits row is scored: none may come from the cache.
  o.engine.prefix_cache = false;
  return readPerplexityFile(o.perplexity, text);
}

/// The artifact with the weights the options name.
StatusOr<ArtifactHandle> openArtifact(const Options &o) {
  cohere2c_artifact_t *opened = nullptr;
  if (Status s = statusOf(cohere2c_artifact_open(o.artifact.c_str(), &opened));
      !s.ok())
    return s;
  return ArtifactHandle(opened);
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
  auto artifact = openArtifact(o);
  if (!artifact.ok())
    return artifact.status();
  cohere2c_artifact_info_t info;
  if (Status s = statusOf(cohere2c_artifact_info(artifact->get(), &info));
      !s.ok())
    return s;
  std::optional<ModelText> text;
  if (info.has_tokenizer) {
    auto opened = ModelText::of(artifact->get());
    if (!opened.ok())
      return opened.status();
    text.emplace(std::move(*opened));
  }
  const ModelText *textOrNull = text ? &*text : nullptr;

  auto requests = requestsOf(o, textOrNull);
  if (!requests.ok())
    return requests.status();
  if (Status s =
          statusOf(bindWeights(artifact->get(), o.checkpoint, o.randomSeed));
      !s.ok())
    return s;
  cohere2c_engine_t *created = nullptr;
  if (Status s = statusOf(
          cohere2c_engine_create(artifact->get(), &o.engine, &created));
      !s.ok())
    return s;
  EngineHandle engine(created);
  std::fprintf(stderr, "ready: %.1f s after start (weights loaded, KV cache allocated)\n",
               std::chrono::duration<double>(std::chrono::steady_clock::now() - o.started)
                   .count());

  int64_t vocab = info.vocab_size;
  Status served = Status::success();
  if (o.single())
    served = serveSingle(engine.get(), textOrNull, requests->front(), o,
                         logitsTarget, vocab);
  else if (o.perplexity.empty())
    served = serveFile(engine.get(), *requests, o, textOrNull, vocab);
  else if (auto report = scorePerplexity(engine.get(), *requests, vocab);
           report.ok())
    std::cout << report->json() << std::endl;
  else
    served = report.status();
  if (!served.ok())
    return served;
  printStats(engine.get());
  return Status::success();
}

} // namespace

int main(int argc, char **argv) {
  installInterruptHandlers();
  Options options;
  if (std::optional<int> exit = parseOptions(argc, argv, options))
    return *exit;
  Status ran = runTool(options);
  // runTool released the engine and the artifact on its way out.
  if (int signal = interruptSignal()) {
    std::cerr << "cohere2c-run: " << strsignal(signal)
              << ": stopped after the step in progress; no output written "
                 "since\n";
    interruptExit(signal);
  }
  return ran.ok() ? exitAfterStdout(kTool, 0) : fail(kTool, ran.message());
}
