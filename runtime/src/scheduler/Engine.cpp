//===- Engine.cpp - Continuous batching over the paged KV cache -----------===//

#include "scheduler/Engine.h"

#include "Support/ParallelFor.h"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <limits>
#include <map>

namespace cohere2c {

namespace {
using Clock = std::chrono::steady_clock;
double msSince(Clock::time_point start) {
  return std::chrono::duration<double, std::milli>(Clock::now() - start)
      .count();
}

/// Most tokens of a prompt of `promptTokens` computed in one step: the
/// prefill chunk (the whole prompt when 0), at most the step budget.
int64_t maxChunkOf(const EngineOptions &options, int64_t promptTokens) {
  return std::min(options.maxStepTokens, options.prefillChunk > 0
                                             ? options.prefillChunk
                                             : promptTokens);
}
} // namespace

/// A request in flight (running, or waiting after a preemption).
struct Engine::Active {
  Request request;
  RequestResult result;
  Clock::time_point submitted;
  Sampler sampler;
  /// Prompt + generated tokens: what a preempted request recomputes.
  std::vector<int32_t> tokens;
  kv::SeqId seq = -1; // -1 while not admitted
  bool admittedBefore = false;
  /// Whether a step has computed tokens of it: until then, an admission
  /// undone to make room for others is not its first (what cachedTokens
  /// and firstLogitsRow report).
  bool computedAny = false;
  /// Tokens already computed when last admitted (its cached prefix): an
  /// eviction before it computed more preempts nothing.
  int64_t computedAtAdmission = 0;
  /// Next sequence position whose logits are to be recorded.
  int64_t nextLogitsRow = 0;
  /// Generated tokens passed to RunCallbacks::onToken.
  size_t tokensReported = 0;
  bool finished = false;

  Active(const Request &r, Ticket ticket) : request(r), sampler(r.sampling) {
    result.id = r.id;
    result.ticket = ticket;
    result.ttftMs = -1; // until the first token
    tokens = r.promptIds;
  }
  /// The tokens generated so far: the index of the next one to sample.
  int64_t generated() const {
    return (int64_t)(tokens.size() - request.promptIds.size());
  }
};

int64_t kvBlocksHeld(const KVGroup &group, int64_t positions, int64_t chunk,
                     int64_t blockSize) {
  auto blocksFor = [blockSize](int64_t tokens) {
    return (tokens + blockSize - 1) / blockSize;
  };
  int64_t all = blocksFor(positions);
  if (group.window == 0)
    return all;
  return std::min(all,
                  blocksFor(std::min(group.window, positions) + chunk) + 2);
}

int64_t kvBlocksPerContext(const Manifest &manifest,
                           const EngineOptions &options) {
  int64_t positions = manifest.config.maxPositionEmbeddings;
  int64_t chunk = maxChunkOf(options, positions);
  int64_t blocks = 0;
  for (const KVGroup &group : manifest.kvGroups)
    blocks += kvBlocksHeld(group, positions, chunk, options.blockSize);
  return blocks;
}

std::string kvCapacityText(const Manifest &manifest,
                           const EngineOptions &options) {
  auto withCommas = [](int64_t n) {
    std::string digits = std::to_string(n), out;
    for (size_t i = 0; i < digits.size(); ++i)
      out +=
          (i && (digits.size() - i) % 3 == 0 ? "," : "") + digits.substr(i, 1);
    return out;
  };
  int64_t groups = manifest.kvGroups.size();
  return withCommas(options.numBlocks) + " blocks of " +
         std::to_string(options.blockSize) + " tokens x " +
         std::to_string(manifest.kvGroups[0].layers.size()) +
         " layers shared by " + std::to_string(groups) + " KV group" +
         (groups > 1 ? "s" : "") + " (" +
         withCommas(options.numBlocks / groups * options.blockSize) +
         " tokens in every group; whole " +
         withCommas(manifest.config.maxPositionEmbeddings) +
         "-token contexts at once: " +
         withCommas(options.numBlocks / kvBlocksPerContext(manifest, options)) +
         ")";
}

int64_t defaultKVBlocks(const Manifest &manifest,
                        const EngineOptions &options) {
  int64_t perSequence = kvBlocksPerContext(manifest, options);
  int64_t blocks = options.maxBatch * perSequence;
  if (manifest.target != "host")
    return blocks;
  return std::max<int64_t>(
      1, std::min(blocks, kMaxDefaultHostKVBytes /
                              kvBytesPerBlock(manifest, options.blockSize)));
}

StatusOr<std::unique_ptr<Engine>> Engine::create(Executor &executor,
                                                 const Manifest &manifest,
                                                 EngineOptions options) {
  if (options.blockSize < 1)
    return Status::error("--block-size must be at least 1, found " +
                         std::to_string(options.blockSize));
  if (options.maxBatch < 1)
    return Status::error("--max-batch must be at least 1, found " +
                         std::to_string(options.maxBatch));
  if (options.prefillChunk < 0)
    return Status::error("--prefill-chunk must be at least 0, found " +
                         std::to_string(options.prefillChunk));
  if (options.maxStepTokens < options.maxBatch)
    return Status::error("--max-num-batched-tokens must be at least --max-batch (" +
                         std::to_string(options.maxBatch) + "), found " +
                         std::to_string(options.maxStepTokens));
  const ModelConfig &config = manifest.config;
  if (options.numBlocks == 0)
    options.numBlocks = defaultKVBlocks(manifest, options);
  if (options.numBlocks < 1 || options.numBlocks >= (1ll << 31))
    return Status::error("--kv-blocks must be in [1, 2^31), found " +
                         std::to_string(options.numBlocks));
  // A token's KV takes a block in every KV group: fewer blocks than groups
  // would start an engine that refuses every request.
  int64_t groups = manifest.kvGroups.size();
  if (options.numBlocks < groups)
    return Status::error("--kv-blocks " + std::to_string(options.numBlocks) +
                         " cannot hold one token: each of the model's " +
                         std::to_string(groups) + " KV groups needs a block");

  std::unique_ptr<Engine> engine(new Engine(executor, manifest, options));
  std::vector<kv::KVGroupSpec> specs;
  for (const KVGroup &group : manifest.kvGroups)
    specs.push_back({group.name(), group.window});
  engine->bytesPerBlock_ = executor.bytesPerBlock();
  StatusOr<std::unique_ptr<kv::KVCacheManager>> cache =
      kv::KVCacheManager::create(options.blockSize, options.numBlocks,
                                 std::move(specs), options.prefixCache);
  if (!cache.ok())
    return cache.status();
  engine->kvCache_ = std::move(*cache);
  return engine;
}

Engine::Engine(Executor &executor, const Manifest &manifest,
               EngineOptions options)
    : executor_(executor), manifest_(manifest), options_(options) {}

Engine::~Engine() = default;

Status Engine::validate(const Request &r) const {
  const ModelConfig &config = manifest_.config;
  std::string who = "request " + (r.id.empty() ? std::string("(no id)") : r.id);
  if (r.promptIds.empty())
    return Status::error(who + ": the prompt is empty");
  for (size_t i = 0; i < r.promptIds.size(); ++i)
    if (r.promptIds[i] < 0 || r.promptIds[i] >= config.vocabSize)
      return Status::error(
          who + ": prompt id " + std::to_string(r.promptIds[i]) + " at index " +
          std::to_string(i) + " is outside the vocabulary [0, " +
          std::to_string(config.vocabSize) + ")");
  if (r.maxNewTokens < 1)
    return Status::error(who + ": max_new_tokens must be at least 1, found " +
                         std::to_string(r.maxNewTokens));
  if (!(r.sampling.temperature >= 0.0 &&
        r.sampling.temperature <= kMaxTemperature))
    return Status::error(who + ": temperature must be in [0, " +
                         std::to_string((int)kMaxTemperature) + "], found " +
                         std::to_string(r.sampling.temperature));
  if (r.topLogprobs < -1 || r.topLogprobs > kMaxTopLogprobs)
    return Status::error(who + ": top_logprobs must be in [0, " +
                         std::to_string(kMaxTopLogprobs) + "], found " +
                         std::to_string(r.topLogprobs));
  // The model sees P + N - 1 positions (the last sampled token is never fed
  // back). Compared without adding: max_new_tokens may be as large as int64
  // allows.
  // One new token (a scored sequence, a single step) adds no position.
  if (r.maxNewTokens - 1 >
      config.maxPositionEmbeddings - (int64_t)r.promptIds.size())
    return Status::error(
        who + ": prompt (" + std::to_string(r.promptIds.size()) + " tokens)" +
        (r.maxNewTokens == 1 ? std::string()
                             : " + max_new_tokens (" +
                                   std::to_string(r.maxNewTokens) + ") - 1") +
        " exceeds the context of " +
        std::to_string(config.maxPositionEmbeddings) +
        " tokens (max_position_embeddings)");

  // Blocks the request needs even alone, so that one that can never fit is
  // refused before any request runs. The KV of the last sampled token is
  // never computed: P + N - 1 positions.
  int64_t prompt = r.promptIds.size();
  int64_t positions = prompt + r.maxNewTokens - 1;
  int64_t chunk = std::min(prompt, maxChunk(r)), needed = 0;
  std::string perGroup;
  for (const KVGroup &group : manifest_.kvGroups) {
    int64_t held = kvBlocksHeld(group, positions, chunk, options_.blockSize);
    needed += held;
    perGroup += (perGroup.empty() ? "" : ", ") + group.name() + " " +
                std::to_string(held);
  }
  if (needed > options_.numBlocks)
    return Status::error(
        who + ": needs up to " + std::to_string(needed) + " KV blocks of " +
        std::to_string(options_.blockSize) + " tokens for its " +
        std::to_string(positions) +
        " positions (prompt + max_new_tokens - 1) computing up to " +
        std::to_string(chunk) + " positions a step (" + perGroup +
        "), but the KV cache has " + std::to_string(options_.numBlocks) +
        " (--kv-blocks)");
  return Status::success();
}

int64_t Engine::maxChunk(const Request &r) const {
  return maxChunkOf(options_, (int64_t)r.promptIds.size());
}

int64_t Engine::nextChunk(const Active &a) const {
  int64_t remaining =
      (int64_t)a.tokens.size() - kvCache_->numComputedTokens(a.seq);
  return std::min(remaining, maxChunk(a.request));
}

StatusOr<Ticket> Engine::submit(const Request &request) {
  Status valid = validate(request);
  if (!valid.ok())
    return valid;
  Ticket ticket = nextTicket_++;
  auto active = std::make_unique<Active>(request, ticket);
  active->submitted = Clock::now();
  waiting_.push_back(active.get());
  active_.emplace(ticket, std::move(active));
  return ticket;
}

Status Engine::cancel(Ticket ticket) {
  auto found = active_.find(ticket);
  if (found == active_.end())
    return Status::success();
  Active *a = found->second.get();
  if (a->seq >= 0) {
    Status freed = kvCache_->freeSequence(a->seq);
    if (!freed.ok())
      return freed;
  }
  running_.erase(std::remove(running_.begin(), running_.end(), a),
                 running_.end());
  waiting_.erase(std::remove(waiting_.begin(), waiting_.end(), a),
                 waiting_.end());
  active_.erase(found);
  return Status::success();
}

std::vector<std::pair<Ticket, kv::SeqId>> Engine::runningSequences() const {
  std::vector<std::pair<Ticket, kv::SeqId>> out;
  for (const Active *a : running_)
    out.emplace_back(a->result.ticket, a->seq);
  return out;
}

Status Engine::admit() {
  // In order while the batch has room and the first chunk fits.
  while (!waiting_.empty() && (int64_t)running_.size() < options_.maxBatch) {
    Active *a = waiting_.front();
    a->seq = nextSeqId_++;
    // A restarted request recording logits recomputes every row it has
    // not recorded yet, so it may reuse no more than that.
    int64_t maxCached = a->admittedBefore && a->request.recordLogits
                            ? a->nextLogitsRow
                            : std::numeric_limits<int64_t>::max();
    StatusOr<int64_t> cached =
        kvCache_->addSequence(a->seq, a->tokens, maxCached);
    if (!cached.ok())
      return cached.status();
    StatusOr<bool> fits = kvCache_->canAllocateSlots(a->seq, nextChunk(*a));
    if (!fits.ok())
      return fits.status();
    if (!*fits) {
      (void)kvCache_->freeSequence(a->seq);
      a->seq = -1;
      if (running_.empty())
        return Status::error(
            "request " + a->request.id +
            ": the KV cache is too small for its next chunk even alone; "
            "raise --kv-blocks");
      break;
    }
    if (!a->admittedBefore) {
      a->result.cachedTokens = *cached;
      a->result.firstLogitsRow = std::max(*cached, a->request.recordLogitsFrom);
      a->nextLogitsRow = a->result.firstLogitsRow;
      a->admittedBefore = true;
    }
    a->computedAtAdmission = *cached;
    running_.push_back(a);
    waiting_.erase(waiting_.begin());
  }
  return Status::success();
}

Status Engine::step(const RunCallbacks &callbacks) {
  Status admitted = admit();
  if (!admitted.ok())
    return admitted;
  if (running_.empty())
    return Status::success();
  Status s = runStep();
  if (!s.ok())
    return s;
  for (Active *a : running_) {
    double ms = msSince(a->submitted);
    if (!a->result.generatedIds.empty() && a->result.ttftMs < 0)
      a->result.ttftMs = ms;
    if (callbacks.onToken)
      for (; a->tokensReported < a->result.generatedIds.size();
           ++a->tokensReported)
        callbacks.onToken(a->result, a->result.generatedIds[a->tokensReported]);
    if (a->finished)
      a->result.totalMs = ms;
  }
  std::vector<std::unique_ptr<Active>> finished;
  for (Active *a : running_)
    if (a->finished) {
      finished.push_back(std::move(active_[a->result.ticket]));
      active_.erase(a->result.ticket);
    }
  running_.erase(std::remove_if(running_.begin(), running_.end(),
                                [](Active *a) { return a->finished; }),
                 running_.end());
  if (callbacks.onFinish)
    for (auto &a : finished)
      callbacks.onFinish(a->result);
  return Status::success();
}

StatusOr<std::vector<RequestResult>>
Engine::run(const std::vector<Request> &requests,
            const RunCallbacks &callbacks) {
  for (const Request &r : requests) {
    Status valid = validate(r);
    if (!valid.ok())
      return valid;
  }
  std::map<Ticket, size_t> order;
  for (size_t i = 0; i < requests.size(); ++i) {
    StatusOr<Ticket> ticket = submit(requests[i]);
    if (!ticket.ok())
      return ticket.status();
    order[*ticket] = i;
  }
  std::vector<RequestResult> results(requests.size());
  RunCallbacks collect = callbacks;
  collect.onFinish = [&](const RequestResult &r) {
    if (callbacks.onFinish)
      callbacks.onFinish(r);
    results[order.at(r.ticket)] = r;
  };
  while (hasWork()) {
    Status s = step(collect);
    if (s.ok())
      continue;
    // Nothing of this run stays in flight.
    for (const auto &[ticket, index] : order)
      (void)cancel(ticket);
    return s;
  }
  return results;
}

/// The running requests' chunks as one step of the executor.
struct Engine::StepBatch {
  StepInput input;
  /// Tokens of running_[s] the step computes.
  std::vector<int64_t> chunks;
  /// The logits rows of running_[s] end before row lastLogit[s] of the
  /// step's output.
  std::vector<int64_t> lastLogit;
  /// Whether running_[s]'s chunk reaches the end of its tokens, so that it
  /// samples its next token from its last logits row.
  std::vector<bool> samples;
  /// Whether the step computes a prompt token or several tokens of one
  /// sequence: its time and tokens count as prefill, else as decode.
  bool hasPrompt = false;
};

std::vector<int64_t> Engine::planChunks() const {
  // A token for each request that decodes, then prompt chunks in admission
  // order while the step's budget lasts (a request left without tokens
  // waits for the next step).
  std::vector<int64_t> planned(running_.size());
  int64_t budget = options_.maxStepTokens;
  for (bool decoding : {true, false})
    for (size_t i = 0; i < running_.size(); ++i) {
      int64_t chunk = nextChunk(*running_[i]);
      if ((chunk == 1) != decoding)
        continue;
      planned[i] = std::min(chunk, budget);
      budget -= planned[i];
    }
  return planned;
}

StatusOr<std::vector<int64_t>>
Engine::allocateChunks(const std::vector<int64_t> &planned) {
  // When blocks run out, preempt the most recently admitted request (it
  // recomputes later): running_ loses its back, and with it the back of
  // the plan.
  std::vector<int64_t> chunks;
  for (size_t i = 0; i < running_.size();) {
    Active *a = running_[i];
    int64_t chunk = planned[i];
    StatusOr<bool> ok = kvCache_->allocateSlots(a->seq, chunk);
    if (!ok.ok())
      return ok.status();
    if (*ok) {
      chunks.push_back(chunk);
      ++i;
      continue;
    }
    Active *victim = running_.back();
    if (victim == a && i == 0)
      return Status::error("request " + a->request.id +
                           ": the KV cache is too small for its next chunk "
                           "even alone; raise --kv-blocks");
    if (kvCache_->numComputedTokens(victim->seq) > victim->computedAtAdmission)
      ++stats_.preemptions;
    else if (!victim->computedAny)
      victim->admittedBefore = false;
    Status freed = kvCache_->freeSequence(victim->seq);
    if (!freed.ok())
      return freed;
    victim->seq = -1;
    running_.pop_back();
    waiting_.insert(waiting_.begin(), victim);
    if (victim == a)
      chunks.resize(i);
  }
  return chunks;
}

Engine::StepBatch Engine::batchOf(std::vector<int64_t> chunks) const {
  StepBatch batch;
  batch.chunks = std::move(chunks);
  batch.lastLogit.resize(running_.size());
  batch.samples.resize(running_.size());
  StepInput &in = batch.input;
  in.numSeqs = running_.size();
  // A batch whose requests sample greedily or at a temperature alone and
  // record no logits needs only each row's token, which a cuda executor
  // samples on the GPU.
  in.tokensOnly =
      std::all_of(running_.begin(), running_.end(), [](const Active *a) {
        return a->sampler.byArgmax() && !a->request.recordLogits &&
               a->request.topLogprobs < 0;
      });
  for (size_t s = 0; s < running_.size(); ++s) {
    const Active *a = running_[s];
    int64_t chunk = batch.chunks[s];
    int64_t begin = kvCache_->numComputedTokens(a->seq);
    int64_t end = begin + chunk;
    bool completes = batch.samples[s] = end == (int64_t)a->tokens.size();
    if (completes && in.tokensOnly) { // its one logits row, the last below
      in.temperatures.push_back(a->sampler.temperature());
      in.noiseSeeds.push_back(a->sampler.noiseSeed(a->generated()));
    }
    batch.hasPrompt |=
        chunk > 0 &&
        (begin < (int64_t)a->request.promptIds.size() || chunk > 1);
    for (int64_t p = begin; p < end; ++p) {
      int32_t row = in.ids.size();
      bool record = a->request.recordLogits && p >= a->nextLogitsRow;
      if (record || (completes && p == end - 1))
        in.logitRows.push_back(row);
      in.ids.push_back(a->tokens[p]);
      in.positions.push_back(p);
      in.seqRows.push_back(s);
      in.generated.push_back(p >= (int64_t)a->request.promptIds.size());
    }
    batch.lastLogit[s] = in.logitRows.size();
  }
  fillBlockTables(in);
  return batch;
}

void Engine::fillBlockTables(StepInput &in) const {
  // One width for every group: the executors pass it as one parameter.
  int64_t groups = kvCache_->numGroups(), width = 1;
  for (int64_t g = 0; g < groups; ++g)
    for (const Active *a : running_)
      width = std::max<int64_t>(width, kvCache_->blockTable(a->seq, g).size());
  in.tableWidth = width;
  in.tables.resize(groups);
  for (int64_t g = 0; g < groups; ++g) {
    in.tables[g].assign(running_.size() * width, kv::kNullBlock);
    for (size_t s = 0; s < running_.size(); ++s) {
      const std::vector<kv::BlockId> &table =
          kvCache_->blockTable(running_[s]->seq, g);
      std::copy(table.begin(), table.end(), in.tables[g].begin() + s * width);
    }
  }
}

Status Engine::runStep() {
  StatusOr<std::vector<int64_t>> chunks = allocateChunks(planChunks());
  if (!chunks.ok())
    return chunks.status();
  StepBatch batch = batchOf(std::move(*chunks));

  Clock::time_point start = Clock::now();
  Status ran = executor_.run(batch.input, output_);
  if (!ran.ok())
    return ran;
  double ms = msSince(start);
  ++stats_.steps;
  (batch.hasPrompt ? stats_.prefillMs : stats_.decodeMs) += ms;
  int64_t used = kvCache_->pool().numUsedBlocks() * bytesPerBlock_;
  stats_.peakKVBytes = std::max(stats_.peakKVBytes, used);

  std::vector<Sampled> tokens = sampleTokens(batch);
  for (size_t s = 0; s < running_.size(); ++s)
    if (Status advanced = advance(*running_[s], batch, s, std::move(tokens[s]));
        !advanced.ok())
      return advanced;
  return Status::success();
}

std::vector<Engine::Sampled> Engine::sampleTokens(const StepBatch &batch) {
  std::vector<Sampled> tokens(running_.size());
  std::vector<size_t> sampling;
  for (size_t s = 0; s < running_.size(); ++s)
    if (batch.samples[s])
      sampling.push_back(s);
  const int64_t vocab = manifest_.config.vocabSize;
  auto sampleRow = [&](size_t i) {
    size_t s = sampling[i];
    Active &a = *running_[s];
    int64_t row = batch.lastLogit[s] - 1;
    const float *logits = output_.logits.data() + row * vocab;
    Sampled &out = tokens[s];
    out.token = batch.input.tokensOnly
                    ? output_.sampledTokens[row]
                    : a.sampler.sample(logits, vocab, a.generated());
    if (out.token >= 0 && a.request.topLogprobs >= 0) {
      out.logprobs.emplace();
      logSoftmaxAt(logits, vocab, out.token, a.request.topLogprobs,
                   out.logprobs->logprob, out.logprobs->top);
    }
  };
  // A thread per core costs more than a row or two is worth, and rows of a
  // tokens-only step are already sampled.
  if (batch.input.tokensOnly || sampling.size() < 2)
    for (size_t i = 0; i < sampling.size(); ++i)
      sampleRow(i);
  else
    parallelFor(sampling.size(), sampleRow);
  return tokens;
}

Status Engine::advance(Active &a, const StepBatch &batch, size_t s,
                       Sampled sampled) {
  int32_t token = sampled.token;
  const int64_t vocab = manifest_.config.vocabSize;
  int64_t chunk = batch.chunks[s], lastLogit = batch.lastLogit[s];
  int64_t begin = kvCache_->numComputedTokens(a.seq);
  Status marked = kvCache_->markComputed(a.seq, chunk);
  if (!marked.ok())
    return marked;
  a.computedAny |= chunk > 0;
  int64_t end = begin + chunk;
  (batch.hasPrompt ? stats_.prefillTokens : stats_.decodeTokens) += chunk;
  if (a.request.recordLogits) {
    // The rows of positions [max(begin, nextLogitsRow), end): the last of
    // this sequence's rows (before them at most the sampling row of an
    // earlier position, which is not recorded). begin <= nextLogitsRow
    // since admission caps the reused prefix there.
    int64_t recorded =
        std::max<int64_t>(0, end - std::max(begin, a.nextLogitsRow));
    a.result.logits.insert(a.result.logits.end(),
                           output_.logits.begin() +
                               (lastLogit - recorded) * vocab,
                           output_.logits.begin() + lastLogit * vocab);
    a.nextLogitsRow = std::max(a.nextLogitsRow, end);
  }
  if (!batch.samples[s])
    return Status::success(); // a prefill chunk that samples nothing
  if (token < 0)
    return Status::error(
        "request " + a.request.id + ": the logits of position " +
        std::to_string(end - 1) +
        " are not finite (NaN or infinite): the weights or the computation "
        "overflowed, and no token can be sampled");
  a.result.generatedIds.push_back(token);
  if (sampled.logprobs)
    a.result.logprobs.push_back(std::move(*sampled.logprobs));
  const auto &eos = options_.eosTokenIds ? *options_.eosTokenIds
                                         : manifest_.config.eosTokenIds;
  bool isEos = std::find(eos.begin(), eos.end(), token) != eos.end();
  if ((int64_t)a.result.generatedIds.size() == a.request.maxNewTokens ||
      (isEos && !options_.ignoreEos && !a.request.ignoreEos)) {
    a.finished = true;
    return kvCache_->freeSequence(a.seq);
  }
  a.tokens.push_back(token);
  return kvCache_->appendTokens(a.seq, {token});
}

} // namespace cohere2c
