//===- Runtime.cpp - The C API (cohere2c/runtime.h) over the C++ runtime --===//
//
// Each handle owns the C++ objects behind it and a reference count; errors
// of the C++ runtime pass through with their messages and get the code the
// header documents for the call. The runtime reports errors as Status
// values, not exceptions; running out of memory (std::bad_alloc) is the one
// failure not turned into a status, as most C libraries do not survive
// malloc failing either.
//
//===----------------------------------------------------------------------===//

#include "cohere2c/runtime.h"

#include "ModelLoading.h"
#include "capi/Handles.h"

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <string>

using namespace cohere2c;
using namespace cohere2c::capi;

struct cohere2c_status_s {
  cohere2c_status_code_t code;
  std::string message;
};

cohere2c_status_t cohere2c::capi::makeStatus(cohere2c_status_code_t code,
                                             std::string message) {
  return new cohere2c_status_s{code, std::move(message)};
}

cohere2c_status_t cohere2c::capi::statusOf(const Status &status,
                                           cohere2c_status_code_t code) {
  return status.ok() ? nullptr : makeStatus(code, status.message());
}

cohere2c_status_t cohere2c::capi::nullArgument(const char *function,
                                               const char *argument) {
  return makeStatus(COHERE2C_STATUS_INVALID_ARGUMENT,
                    std::string(function) + ": " + argument + " is NULL");
}

void cohere2c::capi::copyOut(const std::string &text, char **outText,
                             size_t *outLength) {
  char *copy = static_cast<char *>(std::malloc(text.size() + 1));
  if (!copy)
    std::abort();
  std::memcpy(copy, text.data(), text.size());
  copy[text.size()] = '\0';
  *outText = copy;
  if (outLength)
    *outLength = text.size();
}

void cohere2c::capi::copyOut(const std::vector<int32_t> &ids, int32_t **outIds,
                             size_t *outCount) {
  // malloc(0) may return NULL; one element keeps NULL for errors alone.
  int32_t *copy = static_cast<int32_t *>(
      std::malloc(std::max<size_t>(ids.size(), 1) * sizeof(int32_t)));
  if (!copy)
    std::abort();
  std::copy(ids.begin(), ids.end(), copy);
  *outIds = copy;
  *outCount = ids.size();
}

struct cohere2c_request_t {
  EngineHandle engine;
  std::atomic<int64_t> references{1};
  Ticket ticket = 0;
  cohere2c_request_state_t state = COHERE2C_REQUEST_IN_FLIGHT;
  /// As submitted: -1, or the alternatives each token's logprobs list.
  int32_t topLogprobs = -1;
  /// The tokens (and their logprobs) and TTFT as they come; everything once
  /// finished.
  RequestResult result;
};

static_assert(COHERE2C_MAX_TOP_LOGPROBS == cohere2c::kMaxTopLogprobs,
              "the C API's bound on top_logprobs is the engine's");

//===----------------------------------------------------------------------===//
// Status and memory
//===----------------------------------------------------------------------===//

bool cohere2c_status_is_ok(cohere2c_status_t status) { return !status; }

cohere2c_status_code_t cohere2c_status_code(cohere2c_status_t status) {
  return status ? status->code : COHERE2C_STATUS_OK;
}

const char *cohere2c_status_message(cohere2c_status_t status) {
  return status ? status->message.c_str() : "";
}

void cohere2c_status_free(cohere2c_status_t status) { delete status; }

void cohere2c_free(void *pointer) { std::free(pointer); }

//===----------------------------------------------------------------------===//
// Artifact
//===----------------------------------------------------------------------===//

cohere2c_status_t cohere2c_artifact_open(const char *path,
                                         cohere2c_artifact_t **out_artifact) {
  if (!path)
    return nullArgument("cohere2c_artifact_open", "path");
  if (!out_artifact)
    return nullArgument("cohere2c_artifact_open", "out_artifact");
  auto loaded = LoadedArtifact::load(path);
  if (!loaded.ok())
    return statusOf(loaded.status(), COHERE2C_STATUS_INVALID_ARGUMENT);
  auto text = loadText(**loaded);
  if (!text.ok())
    return statusOf(text.status(), COHERE2C_STATUS_INVALID_ARGUMENT);
  auto *artifact = new cohere2c_artifact_t;
  artifact->loaded = std::move(*loaded);
  artifact->text = std::move(*text);
  *out_artifact = artifact;
  return nullptr;
}

cohere2c_status_t
cohere2c_artifact_default_weights_path(const char *artifact_path,
                                       char **out_path) {
  if (!artifact_path)
    return nullArgument("cohere2c_artifact_default_weights_path",
                        "artifact_path");
  if (!out_path)
    return nullArgument("cohere2c_artifact_default_weights_path", "out_path");
  copyOut(defaultWeightsPath(artifact_path), out_path, nullptr);
  return nullptr;
}

void cohere2c_weights_options_initialize(
    cohere2c_weights_options_t *out_options) {
  *out_options = {COHERE2C_WEIGHTS_FROM_WEIGHTS_FILE, nullptr, 0};
}

cohere2c_status_t
cohere2c_artifact_load_weights(cohere2c_artifact_t *artifact,
                               const cohere2c_weights_options_t *options) {
  if (!artifact)
    return nullArgument("cohere2c_artifact_load_weights", "artifact");
  if (artifact->weights)
    return makeStatus(COHERE2C_STATUS_FAILED_PRECONDITION,
                      artifact->loaded->path() + ": weights already bound");
  cohere2c_weights_options_t given;
  cohere2c_weights_options_initialize(&given);
  if (options)
    given = *options;
  std::string checkpoint;
  std::optional<uint64_t> seed;
  switch (given.source) {
  case COHERE2C_WEIGHTS_FROM_WEIGHTS_FILE:
    break;
  case COHERE2C_WEIGHTS_FROM_CHECKPOINT:
    if (!given.checkpoint_path || !*given.checkpoint_path)
      return makeStatus(COHERE2C_STATUS_INVALID_ARGUMENT,
                        "cohere2c_artifact_load_weights: a checkpoint source "
                        "needs checkpoint_path");
    checkpoint = given.checkpoint_path;
    break;
  case COHERE2C_WEIGHTS_RANDOM:
    seed = given.random_seed;
    break;
  default:
    return makeStatus(COHERE2C_STATUS_INVALID_ARGUMENT,
                      "cohere2c_artifact_load_weights: unknown weights "
                      "source " +
                          std::to_string((int)given.source));
  }
  auto weights = loadWeights(*artifact->loaded, checkpoint, seed);
  if (!weights.ok())
    return statusOf(weights.status(), COHERE2C_STATUS_INVALID_ARGUMENT);
  artifact->weights = std::move(*weights);
  return nullptr;
}

void cohere2c_artifact_retain(cohere2c_artifact_t *artifact) {
  if (artifact)
    artifact->references.fetch_add(1);
}

void cohere2c_artifact_release(cohere2c_artifact_t *artifact) {
  releaseReference(artifact);
}

cohere2c_status_t cohere2c_artifact_info(const cohere2c_artifact_t *artifact,
                                         cohere2c_artifact_info_t *out_info) {
  if (!artifact)
    return nullArgument("cohere2c_artifact_info", "artifact");
  if (!out_info)
    return nullArgument("cohere2c_artifact_info", "out_info");
  const Manifest &manifest = artifact->loaded->manifest();
  *out_info = {manifest.target.c_str(),
               manifest.config.vocabSize,
               manifest.config.maxPositionEmbeddings,
               artifact->text != nullptr,
               artifact->text && artifact->text->hasChatTemplate(),
               artifact->weights != nullptr};
  return nullptr;
}

//===----------------------------------------------------------------------===//
// Engine
//===----------------------------------------------------------------------===//

namespace {

/// The C options of `o` (eos ids pointing into `o`).
cohere2c_engine_options_t cOptionsOf(const EngineOptions &o) {
  cohere2c_engine_options_t c = {
      o.blockSize,        o.numBlocks,  o.prefillChunk,
      o.maxBatch,         o.maxStepTokens, o.gpuMemoryUtilization,
      o.prefixCache,      o.ignoreEos,  nullptr,
      0};
  if (o.eosTokenIds) {
    c.eos_token_ids = o.eosTokenIds->data();
    c.eos_token_count = o.eosTokenIds->size();
  }
  return c;
}

} // namespace

void cohere2c_engine_options_initialize(
    cohere2c_engine_options_t *out_options) {
  *out_options = cOptionsOf(EngineOptions());
}

namespace {

/// The engine's options from the C ones, checked before the executor
/// allocates the KV cache they size.
StatusOr<EngineOptions> engineOptionsOf(const cohere2c_engine_options_t &o) {
  auto outside = [](const char *name, int64_t value, int64_t low,
                    int64_t high) {
    return Status::error(std::string(name) + " must be in [" +
                         std::to_string(low) + ", " + std::to_string(high) +
                         "], found " + std::to_string(value));
  };
  constexpr int64_t kMax16 = int64_t(1) << 16, kMax31 = (int64_t(1) << 31) - 1;
  if (o.block_size < 1 || o.block_size > kMax16)
    return outside("block_size", o.block_size, 1, kMax16);
  if (o.kv_blocks < 0 || o.kv_blocks > kMax31)
    return outside("kv_blocks", o.kv_blocks, 0, kMax31);
  if (o.prefill_chunk < 0)
    return Status::error("prefill_chunk must be at least 0, found " +
                         std::to_string(o.prefill_chunk));
  if (o.max_batch < 1 || o.max_batch > kMax16)
    return outside("max_batch", o.max_batch, 1, kMax16);
  if (o.max_num_batched_tokens < o.max_batch ||
      o.max_num_batched_tokens > kMax31)
    return outside("max_num_batched_tokens", o.max_num_batched_tokens,
                   o.max_batch, kMax31);
  if (!(o.gpu_memory_utilization > 0 && o.gpu_memory_utilization <= 1))
    return Status::error("gpu_memory_utilization must be in (0, 1], found " +
                         std::to_string(o.gpu_memory_utilization));
  EngineOptions options;
  options.blockSize = o.block_size;
  options.numBlocks = o.kv_blocks;
  options.prefillChunk = o.prefill_chunk;
  options.maxBatch = o.max_batch;
  options.maxStepTokens = o.max_num_batched_tokens;
  options.gpuMemoryUtilization = o.gpu_memory_utilization;
  options.prefixCache = o.prefix_cache;
  options.ignoreEos = o.ignore_eos;
  if (o.eos_token_ids)
    options.eosTokenIds = std::vector<int64_t>(
        o.eos_token_ids, o.eos_token_ids + o.eos_token_count);
  return options;
}

} // namespace

cohere2c_status_t
cohere2c_engine_create(cohere2c_artifact_t *artifact,
                       const cohere2c_engine_options_t *options,
                       cohere2c_engine_t **out_engine) {
  if (!artifact)
    return nullArgument("cohere2c_engine_create", "artifact");
  if (!out_engine)
    return nullArgument("cohere2c_engine_create", "out_engine");
  if (!artifact->weights)
    return makeStatus(
        COHERE2C_STATUS_FAILED_PRECONDITION,
        artifact->loaded->path() +
            ": no weights bound (cohere2c_artifact_load_weights)");
  cohere2c_engine_options_t given;
  cohere2c_engine_options_initialize(&given);
  if (options)
    given = *options;
  auto checked = engineOptionsOf(given);
  if (!checked.ok())
    return statusOf(checked.status(), COHERE2C_STATUS_INVALID_ARGUMENT);
  EngineOptions engineOptions = *checked;
  // The model's own EOS ids (generation_config.json's) where it has text.
  if (!engineOptions.eosTokenIds && artifact->text)
    engineOptions.eosTokenIds = artifact->text->eosTokenIds();
  auto executor =
      createExecutor(*artifact->loaded, *artifact->weights, engineOptions);
  if (!executor.ok())
    return statusOf(executor.status(), COHERE2C_STATUS_INTERNAL);
  auto engine =
      Engine::create(**executor, artifact->loaded->manifest(), engineOptions);
  if (!engine.ok())
    return statusOf(engine.status(), COHERE2C_STATUS_INVALID_ARGUMENT);
  cohere2c_artifact_retain(artifact);
  auto *created = new cohere2c_engine_t;
  created->artifact.reset(artifact);
  created->options = engineOptions;
  created->executor = std::move(*executor);
  created->engine = std::move(*engine);
  *out_engine = created;
  return nullptr;
}

void cohere2c_engine_retain(cohere2c_engine_t *engine) {
  if (engine)
    engine->references.fetch_add(1);
}

void cohere2c_engine_release(cohere2c_engine_t *engine) {
  releaseReference(engine);
}

cohere2c_status_t
cohere2c_engine_options(const cohere2c_engine_t *engine,
                        cohere2c_engine_options_t *out_options) {
  if (!engine || !out_options)
    return nullArgument("cohere2c_engine_options", "engine or out_options");
  *out_options = cOptionsOf(engine->options);
  return nullptr;
}

cohere2c_status_t cohere2c_engine_stats(const cohere2c_engine_t *engine,
                                        cohere2c_engine_stats_t *out_stats) {
  if (!engine || !out_stats)
    return nullArgument("cohere2c_engine_stats", "engine or out_stats");
  const EngineStats &s = engine->engine->stats();
  *out_stats = {s.steps,     s.prefillTokens, s.decodeTokens, s.preemptions,
                s.prefillMs, s.decodeMs,      s.peakKVBytes};
  return nullptr;
}

cohere2c_status_t cohere2c_engine_load(const cohere2c_engine_t *engine,
                                       cohere2c_engine_load_t *out_load) {
  if (!engine || !out_load)
    return nullArgument("cohere2c_engine_load", "engine or out_load");
  const Engine &e = *engine->engine;
  *out_load = {e.numRunning(), e.numWaiting(), (size_t)e.kvCache().numGroups(),
               e.kvCache().pool().numFreeBlocks()};
  return nullptr;
}

cohere2c_status_t cohere2c_engine_kv_group(const cohere2c_engine_t *engine,
                                           size_t group,
                                           cohere2c_kv_group_t *out_group) {
  if (!engine || !out_group)
    return nullArgument("cohere2c_engine_kv_group", "engine or out_group");
  const kv::KVCacheManager &cache = engine->engine->kvCache();
  if (group >= (size_t)cache.numGroups())
    return makeStatus(COHERE2C_STATUS_INVALID_ARGUMENT,
                      "cohere2c_engine_kv_group: group " +
                          std::to_string(group) + " of an engine with " +
                          std::to_string(cache.numGroups()) + " KV groups");
  const kv::BlockPool &pool = cache.pool();
  *out_group = {cache.groupSpec(group).name.c_str(), pool.numUsedBlocks(group),
                pool.numEvictableBlocks(group)};
  return nullptr;
}

cohere2c_status_t cohere2c_engine_has_work(const cohere2c_engine_t *engine,
                                           bool *out_has_work) {
  if (!engine || !out_has_work)
    return nullArgument("cohere2c_engine_has_work", "engine or out_has_work");
  *out_has_work = engine->engine->hasWork();
  return nullptr;
}

cohere2c_status_t cohere2c_engine_step(cohere2c_engine_t *engine) {
  if (!engine)
    return nullArgument("cohere2c_engine_step", "engine");
  RunCallbacks callbacks;
  // A request whose cancel failed at its release is no longer in flight
  // here: what the engine still reports of it is dropped.
  callbacks.onToken = [engine](const RequestResult &r, int32_t token) {
    auto found = engine->inFlight.find(r.ticket);
    if (found == engine->inFlight.end())
      return;
    RequestResult &mine = found->second->result;
    mine.generatedIds.push_back(token);
    if (!r.logprobs.empty())
      mine.logprobs.push_back(r.logprobs.back());
    mine.ttftMs = r.ttftMs;
    mine.cachedTokens = r.cachedTokens;
  };
  callbacks.onFinish = [engine](const RequestResult &r) {
    auto found = engine->inFlight.find(r.ticket);
    if (found == engine->inFlight.end())
      return;
    found->second->result = r;
    found->second->state = COHERE2C_REQUEST_FINISHED;
    engine->inFlight.erase(found);
  };
  return statusOf(engine->engine->step(callbacks), COHERE2C_STATUS_INTERNAL);
}

//===----------------------------------------------------------------------===//
// Requests
//===----------------------------------------------------------------------===//

void cohere2c_request_options_initialize(
    cohere2c_request_options_t *out_options) {
  Request defaults;
  *out_options = {};
  out_options->max_new_tokens = defaults.maxNewTokens;
  out_options->temperature = defaults.sampling.temperature;
  out_options->top_k = defaults.sampling.topK;
  out_options->top_p = defaults.sampling.topP;
  out_options->seed = defaults.sampling.seed;
  out_options->top_logprobs = defaults.topLogprobs;
}

namespace {

/// The engine's request from the C one; the engine checks the rest
/// (Engine::validate), this what only the C API lets through.
StatusOr<Request> requestOf(const cohere2c_request_options_t &o) {
  Request r;
  r.id = o.id ? o.id : "";
  std::string who = "request " + (r.id.empty() ? std::string("(no id)") : r.id);
  if (!o.prompt_ids && o.prompt_length)
    return Status::error(who + ": prompt_ids is NULL");
  if (!std::isfinite(o.temperature) || o.temperature < 0)
    return Status::error(who + ": temperature must be a number >= 0, found " +
                         std::to_string(o.temperature));
  if (!std::isfinite(o.top_p) || o.top_p <= 0 || o.top_p > 1)
    return Status::error(who + ": top_p must be a number in (0, 1], found " +
                         std::to_string(o.top_p));
  if (o.top_k < 0)
    return Status::error(who + ": top_k must be at least 0, found " +
                         std::to_string(o.top_k));
  if (o.record_logits_from < 0)
    return Status::error(who +
                         ": record_logits_from must be at least 0, found " +
                         std::to_string(o.record_logits_from));
  r.promptIds.assign(o.prompt_ids, o.prompt_ids + o.prompt_length);
  r.maxNewTokens = o.max_new_tokens;
  r.sampling = {o.temperature, o.top_k, o.top_p, o.seed};
  r.ignoreEos = o.ignore_eos;
  r.recordLogits = o.record_logits;
  r.recordLogitsFrom = o.record_logits_from;
  r.topLogprobs = o.top_logprobs;
  return r;
}

} // namespace

cohere2c_status_t
cohere2c_engine_submit(cohere2c_engine_t *engine,
                       const cohere2c_request_options_t *options,
                       cohere2c_request_t **out_request) {
  if (!engine || !options || !out_request)
    return nullArgument("cohere2c_engine_submit",
                        "engine, options or out_request");
  auto request = requestOf(*options);
  if (!request.ok())
    return statusOf(request.status(), COHERE2C_STATUS_INVALID_ARGUMENT);
  auto ticket = engine->engine->submit(*request);
  if (!ticket.ok())
    return statusOf(ticket.status(), COHERE2C_STATUS_INVALID_ARGUMENT);
  cohere2c_engine_retain(engine);
  auto *submitted = new cohere2c_request_t;
  submitted->engine.reset(engine);
  submitted->ticket = *ticket;
  submitted->result.id = request->id;
  submitted->result.ticket = *ticket;
  submitted->result.ttftMs = -1;
  submitted->topLogprobs = request->topLogprobs;
  engine->inFlight[*ticket] = submitted;
  *out_request = submitted;
  return nullptr;
}

cohere2c_status_t
cohere2c_engine_validate(const cohere2c_engine_t *engine,
                         const cohere2c_request_options_t *options) {
  if (!engine || !options)
    return nullArgument("cohere2c_engine_validate", "engine or options");
  auto request = requestOf(*options);
  if (!request.ok())
    return statusOf(request.status(), COHERE2C_STATUS_INVALID_ARGUMENT);
  return statusOf(engine->engine->validate(*request),
                  COHERE2C_STATUS_INVALID_ARGUMENT);
}

cohere2c_status_t cohere2c_request_state(const cohere2c_request_t *request,
                                         cohere2c_request_state_t *out_state) {
  if (!request || !out_state)
    return nullArgument("cohere2c_request_state", "request or out_state");
  *out_state = request->state;
  return nullptr;
}

cohere2c_status_t
cohere2c_request_generated_ids(const cohere2c_request_t *request,
                               const int32_t **out_ids, size_t *out_count) {
  if (!request || !out_ids || !out_count)
    return nullArgument("cohere2c_request_generated_ids",
                        "request, out_ids or out_count");
  *out_ids = request->result.generatedIds.data();
  *out_count = request->result.generatedIds.size();
  return nullptr;
}

cohere2c_status_t cohere2c_request_stats(const cohere2c_request_t *request,
                                         cohere2c_request_stats_t *out_stats) {
  if (!request || !out_stats)
    return nullArgument("cohere2c_request_stats", "request or out_stats");
  const RequestResult &r = request->result;
  *out_stats = {r.cachedTokens, r.ttftMs, r.totalMs};
  return nullptr;
}

cohere2c_status_t cohere2c_request_logprobs(const cohere2c_request_t *request,
                                            size_t index, float *out_logprob,
                                            int32_t *out_top_ids,
                                            float *out_top_logprobs,
                                            size_t capacity,
                                            size_t *out_top_count) {
  if (!request || !out_logprob || !out_top_count ||
      (capacity && (!out_top_ids || !out_top_logprobs)))
    return nullArgument(
        "cohere2c_request_logprobs",
        "request, out_logprob, out_top_count, out_top_ids or out_top_logprobs");
  const RequestResult &r = request->result;
  std::string who = "request " + (r.id.empty() ? std::string("(no id)") : r.id);
  if (request->topLogprobs < 0)
    return makeStatus(COHERE2C_STATUS_FAILED_PRECONDITION,
                      who + ": submitted without top_logprobs");
  if (index >= r.logprobs.size())
    return makeStatus(COHERE2C_STATUS_INVALID_ARGUMENT,
                      who + ": token " + std::to_string(index) + " of " +
                          std::to_string(r.logprobs.size()) + " generated");
  const TokenLogprobs &lp = r.logprobs[index];
  if (capacity < lp.top.size())
    return makeStatus(COHERE2C_STATUS_INVALID_ARGUMENT,
                      who + ": room for " + std::to_string(capacity) +
                          " of its " + std::to_string(lp.top.size()) +
                          " top log probabilities");
  *out_logprob = lp.logprob;
  for (size_t i = 0; i < lp.top.size(); ++i) {
    out_top_ids[i] = lp.top[i].first;
    out_top_logprobs[i] = lp.top[i].second;
  }
  *out_top_count = lp.top.size();
  return nullptr;
}

cohere2c_status_t cohere2c_request_logits(const cohere2c_request_t *request,
                                          const float **out_logits,
                                          int64_t *out_rows,
                                          int64_t *out_first_row) {
  if (!request || !out_logits || !out_rows || !out_first_row)
    return nullArgument("cohere2c_request_logits",
                        "request, out_logits, out_rows or out_first_row");
  const RequestResult &r = request->result;
  std::string who = "request " + (r.id.empty() ? std::string("(no id)") : r.id);
  if (request->state != COHERE2C_REQUEST_FINISHED)
    return makeStatus(COHERE2C_STATUS_FAILED_PRECONDITION,
                      who + ": logits are read once it has finished");
  int64_t vocab =
      request->engine->artifact->loaded->manifest().config.vocabSize;
  *out_logits = r.logits.data();
  *out_rows = (int64_t)r.logits.size() / vocab;
  *out_first_row = r.firstLogitsRow;
  return nullptr;
}

cohere2c_status_t cohere2c_request_cancel(cohere2c_request_t *request) {
  if (!request)
    return nullArgument("cohere2c_request_cancel", "request");
  if (request->state != COHERE2C_REQUEST_IN_FLIGHT)
    return nullptr;
  cohere2c_engine_t &engine = *request->engine;
  Status cancelled = engine.engine->cancel(request->ticket);
  if (!cancelled.ok())
    return statusOf(cancelled, COHERE2C_STATUS_INTERNAL);
  engine.inFlight.erase(request->ticket);
  request->state = COHERE2C_REQUEST_CANCELLED;
  return nullptr;
}

void cohere2c_request_retain(cohere2c_request_t *request) {
  if (request)
    request->references.fetch_add(1);
}

void cohere2c_request_release(cohere2c_request_t *request) {
  if (!request || request->references.fetch_sub(1) != 1)
    return;
  // Nothing can report a cancel failure here (the engine's KV accounting
  // stays as the failed cancel left it); the request leaves regardless.
  cohere2c_status_free(cohere2c_request_cancel(request));
  request->engine->inFlight.erase(request->ticket);
  delete request;
}
