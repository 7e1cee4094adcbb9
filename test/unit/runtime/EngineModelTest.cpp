//===- EngineModelTest.cpp - Model-based test of the scheduler ------------===//
//
// Random request mixes served by Engine as a server serves them (submit,
// step, cancel, tokens reported as they are sampled), checked at every step
// against a small reference model of the scheduler and the KV cache: what
// each request has computed, which blocks its tables hold and what those
// hold, what must be referenced, cached and free, and how much of each prompt
// the prefix cache must serve. Every output must equal the same request run
// alone on a fresh engine and, on the hash model, the tokens its true context
// gives, worked out here without an engine.
//
// 4000 mixes run on HashModelExecutor (HashModel.h), whose KV entries hash
// the whole context and whose logits hash what a query reads through the
// block tables, so that a mix takes about a millisecond. They draw full and
// sliding layers, or either alone; windows W of 1 to 8; blocks of 1 to W + 1
// tokens; a KV pool from just what the largest request needs alone (preemption)
// to plenty; 1 to 8 requests in flight; prefill chunks and step token
// budgets; 1 to 10 requests arriving over time, with shared prefixes,
// identical prompts, prompts that are prefixes of earlier ones or extend
// them (with the tokens an earlier request generated, too); cancellations
// while waiting, in prefill and in decode; EOS; greedy and sampled requests;
// logits and log probabilities recorded; the prefix cache on or off.
// 24 more mixes run on the host artifact of tiny-cohere2 (W = 8), with the
// hash model beside it so that the same checks read its pool.
//
// Before each step runs (S), after each step and cancellation (K), at the
// end (E):
//   S1 at most max-batch sequences and max-num-batched-tokens tokens;
//   S2 each row is a running request's next chunk: its own tokens at the
//      positions after those computed, flagged generated past the prompt;
//      every decode token, then prompt chunks in admission order while the
//      budget lasts (exactly so where no allocation can fail);
//   S3 logits wanted exactly at the sampled row and the rows to record;
//   S4 the block tables are the KV cache's; the step writes only into
//      blocks its sequence holds alone, uncached;
//   S5 a request (re)admitted starts at the cached prefix the rules of
//      KVCacheManager.h give: the largest L = mB < n whose blocks visible
//      from L every group caches, at most what a restart recording logits
//      has recorded;
//   K1 the running requests, in order, are those the steps ran less those
//      that finished; a running request has computed what its chunks say;
//      finished, cancelled and preempted requests hold no sequence;
//      preemptions are counted as EngineStats says;
//   K2 a running request's tables cover ceil(computed / B) blocks, a
//      sliding table null exactly below the window of its last chunk, and
//      each block holds the KV of that request's own tokens;
//   K3 a block's reference count is the number of running tables holding
//      it; a block held twice is cached;
//   K4 every cached block holds a full block of some request's prefix;
//   K5 used = blocks held, evictable = cached and unheld, free = the rest;
//   E1 every pool free or cached; every token sampled only once its whole
//      context was computed; every output (tokens, recorded logits, log
//      probabilities, cached tokens) equal to its solo run and, on the hash
//      model, to the reference.
// A failure names the mix's seed and prints the mix, so that it reproduces.
//
//===----------------------------------------------------------------------===//

#include "HashModel.h"
#include "ReferenceModel.h"
#include "host/HostExecutor.h"
#include "scheduler/Engine.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <functional>
#include <iostream>
#include <limits>
#include <map>
#include <optional>
#include <random>
#include <set>
#include <sstream>
#include <unordered_map>

namespace cohere2c::test {
namespace {

using Tokens = std::vector<int32_t>;

int64_t ceilDiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

constexpr int64_t kNoCap = std::numeric_limits<int64_t>::max();

const char *kInvariants =
    "S1 batch and token budget; S2 rows are each request's next chunk, "
    "decode tokens first, then prompt chunks in order; S3 logits rows; S4 "
    "tables are the KV cache's, writes only into blocks held alone and "
    "uncached; S5 cached prefix on (re)admission; K1 running set, computed "
    "tokens, no sequence left behind, preemption count; K2 table shapes and "
    "contents; K3 reference counts, shared blocks cached; K4 cached blocks "
    "hold some prefix; K5 used / evictable / free counts; E1 no leak, "
    "outputs equal to solo runs and to the reference";

std::string text(const Tokens &tokens) {
  std::ostringstream out;
  out << "[";
  for (size_t i = 0; i < tokens.size(); ++i)
    out << (i ? " " : "") << tokens[i];
  out << "]";
  return out.str();
}

//===----------------------------------------------------------------------===//
// Mixes
//===----------------------------------------------------------------------===//

/// A request, the step before which it is submitted, the one before which
/// it is cancelled (-1: never), and on the hash model the tokens it must
/// generate.
struct MixRequest {
  Request request;
  int64_t arrival = 0, cancelAt = -1;
  std::optional<Tokens> expected;
};

struct Mix {
  uint32_t seed = 0;
  Manifest manifest;
  EngineOptions options;
  std::vector<MixRequest> requests;
  /// Every request in flight fits at once: no allocation can fail.
  bool roomy = false;

  std::string describe() const;
};

std::string requestText(const Request &r) {
  std::ostringstream out;
  out << r.id << ": N=" << r.maxNewTokens;
  const SamplingParams &s = r.sampling;
  if (s.temperature > 0)
    out << " T=" << s.temperature << " top-k " << s.topK << " top-p " << s.topP
        << " seed " << s.seed;
  if (r.recordLogits)
    out << " logits from " << r.recordLogitsFrom;
  if (r.topLogprobs >= 0)
    out << " top-logprobs " << r.topLogprobs;
  if (r.ignoreEos)
    out << " ignore-eos";
  out << " prompt " << text(r.promptIds);
  return out.str();
}

std::string Mix::describe() const {
  std::ostringstream out;
  const ModelConfig &c = manifest.config;
  out << "mix of seed " << seed << ": KV groups";
  for (const KVGroup &group : manifest.kvGroups)
    out << " " << group.name() << " (" << group.layers.size() << " layers)";
  std::vector<int32_t> eos(options.eosTokenIds->begin(),
                           options.eosTokenIds->end());
  out << ", vocab " << c.vocabSize << ", B=" << options.blockSize << ", "
      << options.numBlocks << " blocks" << (roomy ? " (roomy)" : "")
      << ", max-batch " << options.maxBatch << ", prefill-chunk "
      << options.prefillChunk << ", step tokens " << options.maxStepTokens
      << ", prefix cache " << (options.prefixCache ? "on" : "off") << ", eos "
      << text(eos) << (options.ignoreEos ? " ignored" : "") << "\n";
  for (const MixRequest &m : requests) {
    out << "  arrives " << m.arrival;
    if (m.cancelAt >= 0)
      out << ", cancelled at " << m.cancelAt;
    out << ", " << requestText(m.request) << "\n";
  }
  return out.str();
}

bool endsAt(const EngineOptions &options, const Request &r, int32_t token) {
  const std::vector<int64_t> &eos = *options.eosTokenIds;
  return !options.ignoreEos && !r.ignoreEos &&
         std::find(eos.begin(), eos.end(), token) != eos.end();
}

/// The greedy rule of Sampler.h, kept apart from the engine's code.
int32_t firstMaximum(const std::vector<float> &row) {
  return std::max_element(row.begin(), row.end()) - row.begin();
}

/// The tokens `r` generates on the hash model when every read is right.
Tokens expectedTokens(const HashModel &model, const EngineOptions &options,
                      const Request &r) {
  Tokens tokens = r.promptIds, out;
  std::vector<uint64_t> keys = HashModel::chains(tokens);
  std::vector<float> row(model.vocab());
  Sampler sampler(r.sampling);
  while ((int64_t)out.size() < r.maxNewTokens) {
    model.logitsAt(keys, tokens.size() - 1, row.data());
    int32_t token = r.sampling.temperature > 0
                        ? sampler.sample(row.data(), row.size(), out.size())
                        : firstMaximum(row);
    out.push_back(token);
    if (endsAt(options, r, token))
      break;
    keys.push_back(HashModel::chain(keys.back(), token, tokens.size()));
    tokens.push_back(token);
  }
  return out;
}

/// Blocks `r` needs alone, summed over the groups: the rule Engine::validate
/// states (Engine.h).
int64_t blocksAlone(const Mix &mix, const Request &r) {
  const EngineOptions &o = mix.options;
  const int64_t prompt = r.promptIds.size();
  const int64_t positions = prompt + r.maxNewTokens - 1;
  const int64_t chunk =
      std::min(prompt, std::min(o.maxStepTokens,
                                o.prefillChunk > 0 ? o.prefillChunk : prompt));
  int64_t needed = 0;
  for (const KVGroup &group : mix.manifest.kvGroups) {
    int64_t blocks = ceilDiv(positions, o.blockSize);
    if (group.window > 0)
      blocks = std::min(blocks, ceilDiv(group.window + chunk, o.blockSize) + 2);
    needed += blocks;
  }
  return needed;
}

class MixGenerator {
public:
  /// `base`: tiny-cohere2's manifest. On the hash model the layers, window
  /// and vocabulary vary and the expected tokens are worked out; on the real
  /// model the shape is base's.
  MixGenerator(uint32_t seed, const Manifest &base, bool hashModel)
      : seed(seed), rng(seed), base(base), hashModel(hashModel) {}

  Mix generate() {
    Mix mix;
    mix.seed = seed;
    mix.manifest = base;
    if (hashModel)
      pickShape(mix.manifest);
    pickOptions(mix);
    const int64_t n = uniform(1, hashModel ? 10 : 6);
    for (int64_t i = 0; i < n; ++i)
      mix.requests.push_back(pickRequest(mix, i, n));
    sizePool(mix);
    return mix;
  }

private:
  int64_t uniform(int64_t lo, int64_t hi) {
    return std::uniform_int_distribution<int64_t>(lo, hi)(rng);
  }
  double real(double lo, double hi) {
    return std::uniform_real_distribution<double>(lo, hi)(rng);
  }
  bool chance(double p) { return std::bernoulli_distribution(p)(rng); }

  // Cohere2's pattern (three sliding layers, then a full one), full layers
  // alone, sliding layers alone (which the hash model needs W >= 2 for), or
  // Cohere2's pattern with a second, wider window on every other sliding
  // layer: three windows, split into KV groups of equal size, as the attn
  // dialect allows though no Cohere2 config names two windows.
  void pickShape(Manifest &m) {
    const int64_t layout = uniform(0, 11);
    const bool twoWindows = layout >= 10;
    ModelConfig &c = m.config;
    for (int64_t i = 0; i < c.numLayers; ++i)
      c.layerKinds[i] =
          layout < 6 || twoWindows
              ? (i % 4 == 3 ? LayerKind::Full : LayerKind::Sliding)
          : layout < 8 ? LayerKind::Full
                       : LayerKind::Sliding;
    c.slidingWindow = uniform(layout == 8 || layout == 9 ? 2 : 1, 8);
    c.vocabSize = chance(0.5) ? 16 : 64;
    const int64_t wider = c.slidingWindow + uniform(1, 8);
    std::map<int64_t, int64_t> windowOfLayer;
    for (int64_t i = 0; i < c.numLayers; ++i)
      windowOfLayer[i] = c.layerKinds[i] == LayerKind::Full ? 0
                         : twoWindows && i % 2              ? wider
                                                            : c.slidingWindow;
    m.kvGroups = kvGroupsOfWindows(windowOfLayer);
  }

  void pickOptions(Mix &mix) {
    EngineOptions &o = mix.options;
    const ModelConfig &c = mix.manifest.config;
    const bool sliding = mix.manifest.kvGroups.back().window > 0;
    o.blockSize = uniform(1, (sliding ? c.slidingWindow : uniform(1, 8)) + 1);
    o.maxBatch = uniform(1, 8);
    o.prefillChunk = chance(0.5) ? 0 : uniform(1, 12);
    o.maxStepTokens = chance(0.4) ? kDefaultMaxStepTokens
                                  : uniform(o.maxBatch, o.maxBatch + 24);
    o.prefixCache = chance(0.9);
    o.ignoreEos = chance(0.3);
    // The hash model's tokens are uniform: one or two EOS ids end about one
    // request in ten per token of a 16-token vocabulary. The real model
    // repeats itself: more ids.
    std::vector<int64_t> eos;
    for (int64_t i = 0, n = hashModel ? uniform(1, 2) : uniform(8, 40); i < n;
         ++i)
      eos.push_back(uniform(0, c.vocabSize - 1));
    o.eosTokenIds = eos;
    const int64_t alphabets[] = {2, 3, c.vocabSize};
    alphabet = alphabets[uniform(0, 2)];
  }

  Tokens randomTokens(int64_t n) {
    Tokens tokens(n);
    for (int32_t &t : tokens)
      t = uniform(0, alphabet - 1);
    return tokens;
  }

  static Tokens head(const Tokens &tokens, int64_t n) {
    return Tokens(tokens.begin(), tokens.begin() + n);
  }

  // A new prompt, an earlier one, a prefix of one, an earlier prefix with a
  // new ending, an earlier prompt extended (with what it generated, where
  // that is known).
  Tokens pickPrompt(const Mix &mix) {
    const int64_t maxLength = hashModel ? 40 : 24;
    if (mix.requests.empty() || chance(0.3))
      return randomTokens(uniform(1, maxLength));
    const MixRequest &earlier =
        mix.requests[uniform(0, mix.requests.size() - 1)];
    const Tokens &prompt = earlier.request.promptIds;
    Tokens out;
    switch (uniform(0, 4)) {
    case 0:
      return prompt;
    case 1:
      return head(prompt, uniform(1, prompt.size()));
    case 2:
      out = head(prompt, uniform(0, prompt.size()));
      break;
    case 3:
      out = prompt;
      break;
    default:
      out = prompt;
      if (earlier.expected) {
        const Tokens &more = *earlier.expected;
        out.insert(out.end(), more.begin(),
                   more.begin() + uniform(1, more.size()));
        if (chance(0.5))
          return out;
      }
    }
    Tokens tail = randomTokens(uniform(1, maxLength / 2));
    out.insert(out.end(), tail.begin(), tail.end());
    return out;
  }

  MixRequest pickRequest(const Mix &mix, int64_t index, int64_t count) {
    MixRequest m;
    Request &r = m.request;
    r.id = "r" + std::to_string(index);
    r.promptIds = pickPrompt(mix);
    r.maxNewTokens = uniform(1, hashModel ? 20 : 10);
    if (chance(0.2)) {
      r.sampling.temperature = real(0.3, 1.5);
      r.sampling.topK = chance(0.5) ? uniform(1, 16) : 0;
      r.sampling.topP = chance(0.5) ? real(0.3, 1.0) : 1.0;
      r.sampling.seed = rng();
    }
    if (chance(0.15)) {
      r.recordLogits = true;
      r.recordLogitsFrom = uniform(0, r.promptIds.size() + r.maxNewTokens - 2);
    }
    if (chance(0.1))
      r.topLogprobs = uniform(0, 3);
    r.ignoreEos = chance(0.1);
    m.arrival = uniform(0, 3 * count);
    if (chance(0.15))
      m.cancelAt = m.arrival + uniform(0, 30);
    if (hashModel)
      m.expected =
          expectedTokens(HashModel(mix.manifest), mix.options, m.request);
    return m;
  }

  // Just what the largest request needs alone (preemptions), twice that, or
  // room for every request in flight at once.
  void sizePool(Mix &mix) {
    int64_t needed = 1;
    for (const MixRequest &m : mix.requests)
      needed = std::max(needed, blocksAlone(mix, m.request));
    const int64_t all = mix.options.maxBatch * needed;
    switch (uniform(0, 2)) {
    case 0:
      mix.options.numBlocks = needed + uniform(0, 2);
      break;
    case 1:
      mix.options.numBlocks = 2 * needed + uniform(0, 4);
      break;
    default:
      mix.options.numBlocks = all + uniform(0, 8);
    }
    mix.roomy = mix.options.numBlocks >= all;
  }

  uint32_t seed;
  std::mt19937 rng;
  const Manifest &base;
  bool hashModel;
  int64_t alphabet = 2;
};

//===----------------------------------------------------------------------===//
// The driver and the reference model
//===----------------------------------------------------------------------===//

struct MixStats {
  int64_t mixes = 0, requests = 0, steps = 0, preemptions = 0, readmissions = 0,
          prefixHits = 0, cachedTokens = 0, evictions = 0, cancelledWaiting = 0,
          cancelledInPrefill = 0, cancelledInDecode = 0, eosFinishes = 0,
          chunkedPrompts = 0, soloRuns = 0;

  void add(const MixStats &o) {
    mixes += o.mixes;
    requests += o.requests;
    steps += o.steps;
    preemptions += o.preemptions;
    readmissions += o.readmissions;
    prefixHits += o.prefixHits;
    cachedTokens += o.cachedTokens;
    evictions += o.evictions;
    cancelledWaiting += o.cancelledWaiting;
    cancelledInPrefill += o.cancelledInPrefill;
    cancelledInDecode += o.cancelledInDecode;
    eosFinishes += o.eosFinishes;
    chunkedPrompts += o.chunkedPrompts;
    soloRuns += o.soloRuns;
  }

  std::string describe() const {
    std::ostringstream out;
    out << mixes << " mixes, " << requests << " requests, " << steps
        << " steps checked, " << preemptions << " preemptions (" << readmissions
        << " readmissions), " << prefixHits << " prefix hits (" << cachedTokens
        << " tokens), " << evictions << " cached blocks evicted, cancelled "
        << cancelledWaiting << " waiting + " << cancelledInPrefill
        << " in prefill + " << cancelledInDecode << " in decode, "
        << eosFinishes << " ended by EOS, " << chunkedPrompts
        << " prompts in chunks, " << soloRuns << " solo runs";
    return out.str();
  }
};

/// What the engine under test steps: the test's checks of the step, then
/// the hash model (whose pool the checks read), then the real executor
/// when there is one (whose outputs the engine gets instead).
class CheckedExecutor : public Executor {
public:
  std::function<Status(const StepInput &)> check;
  HashModelExecutor *hash = nullptr;
  Executor *real = nullptr;

  Status run(const StepInput &input, StepOutput &output) override {
    Status checked = check(input);
    if (!checked.ok())
      return checked;
    Status ran = hash->run(input, real ? dropped : output);
    if (!ran.ok() || !real)
      return ran;
    return real->run(input, output);
  }
  int64_t bytesPerBlock() const override {
    return real ? real->bytesPerBlock() : hash->bytesPerBlock();
  }

private:
  StepOutput dropped;
};

/// Makes the real executor of a run: a pool of `numBlocks` blocks of
/// `blockSize` tokens.
using ExecutorFactory = std::function<std::unique_ptr<Executor>(
    int64_t blockSize, int64_t numBlocks)>;

/// What the test knows of a request: what it submitted and what the engine
/// reported or passed to the executor, never the engine's own records.
struct Tracked {
  enum class State { Unsubmitted, Waiting, Running, Finished, Cancelled };
  const MixRequest *spec = nullptr;
  State state = State::Unsubmitted;
  Ticket ticket = 0;
  /// The prompt and every token reported; keys[j] = HashModel::chain(j).
  Tokens tokens;
  std::vector<uint64_t> keys;
  /// Tokens whose full blocks are in MixRun::blockOwners.
  size_t learned = 0;
  kv::SeqId seq = -1; // while running
  /// The last chunk, [begin, computed), and where this admission started.
  int64_t begin = 0, computed = 0, admittedAt = 0;
  /// Admitted, and not since undone before a step computed any of its
  /// tokens (the engine's "first admission").
  bool admittedBefore = false, computedAny = false;
  int64_t cachedTokens = 0, nextLogitsRow = 0;
  /// Chunks that ended before the end of the prompt.
  int64_t partialPromptChunks = 0;
  RequestResult result;
};

class MixRun {
public:
  /// `makeReal`: the executor whose outputs count; empty for the hash
  /// model's.
  MixRun(const Mix &mix, ExecutorFactory makeReal)
      : mix(mix), makeReal(std::move(makeReal)), model(mix.manifest) {}

  void run();
  const MixStats &stats() const { return counts; }

private:
  using State = Tracked::State;

  const kv::KVCacheManager &cache() const { return engine->kvCache(); }
  int64_t blockSize() const { return mix.options.blockSize; }
  int64_t firstVisibleBlock(int64_t group, int64_t position) const {
    return model.firstKey(group, position) / blockSize();
  }
  int64_t maxChunk(const Request &r) const {
    const EngineOptions &o = mix.options;
    return std::min(o.maxStepTokens, o.prefillChunk > 0
                                         ? o.prefillChunk
                                         : (int64_t)r.promptIds.size());
  }
  Tracked &at(Ticket ticket) { return tracked[byTicket.at(ticket)]; }

  void start();
  void submitArrivals(int64_t step);
  void cancelDue(int64_t step);
  void cancel(Tracked &r);
  void learn(Tracked &r, size_t index);

  Status checkStep(const StepInput &input);
  void checkBudget(const std::vector<std::vector<int32_t>> &rows,
                   const std::vector<int64_t> &wanted);
  void checkRow(const StepInput &input, const std::vector<int32_t> &row,
                const std::vector<bool> &isLogitRow, const Tracked &r,
                int64_t begin);
  void checkTablesOfStep(const StepInput &input,
                         const std::vector<Tracked *> &rows);
  void admitted(Tracked &r, kv::SeqId seq);
  int64_t predictedReuse(const Tracked &r, int64_t cap) const;

  void tokenReported(const RequestResult &result, int32_t token);
  void finished(const RequestResult &result);
  void afterStep();
  void checkRunning();

  void checkAccounting();
  void checkTables(const Tracked &r, int64_t group,
                   std::vector<int64_t> &holders,
                   std::vector<int64_t> &holderGroup);
  void checkHeldBlock(int64_t group, int32_t block, const Tracked &r,
                      int64_t k);
  void checkPool(const std::vector<int64_t> &holders,
                 const std::vector<int64_t> &holderGroup);
  void checkCachedBlock(int64_t group, int32_t block);
  void snapshotCache();

  void checkOutputs();
  void checkOutput(const Tracked &r);
  void compareWithSolo(const Tracked &r);
  RequestResult solo(const Request &r);

  const Mix &mix;
  ExecutorFactory makeReal;
  HashModel model;
  std::unique_ptr<HashModelExecutor> hash;
  std::unique_ptr<Executor> real;
  CheckedExecutor checked;
  std::unique_ptr<Engine> engine;
  RunCallbacks callbacks;

  std::vector<Tracked> tracked;
  std::map<Ticket, size_t> byTicket;
  /// Running requests in batch order, as the test expects them.
  std::vector<Ticket> running;
  /// Tickets of the rows of the step being run.
  std::vector<Ticket> stepRows;
  /// Sequences of requests that no longer run: the cache must not have them.
  std::vector<kv::SeqId> ended;
  int64_t preemptionsCounted = 0;
  /// The key (chain value) ending each full block of every request's
  /// tokens -> that request and the block's end.
  std::unordered_map<uint64_t, std::pair<size_t, int64_t>> blockOwners;
  /// Per group, the keys ending the cached blocks after the last step.
  std::vector<std::set<uint64_t>> cachedKeys;
  MixStats counts;
};

//===--- Serving, as a server does ---------------------------------------===//

void MixRun::start() {
  const EngineOptions &o = mix.options;
  hash = std::make_unique<HashModelExecutor>(mix.manifest, o.blockSize,
                                             o.numBlocks);
  checked.hash = hash.get();
  if (makeReal) {
    real = makeReal(o.blockSize, o.numBlocks);
    ASSERT_TRUE(real);
    checked.real = real.get();
  }
  checked.check = [this](const StepInput &input) { return checkStep(input); };
  StatusOr<std::unique_ptr<Engine>> made =
      Engine::create(checked, mix.manifest, o);
  ASSERT_TRUE(made.ok()) << made.status().message();
  engine = std::move(*made);
  ASSERT_EQ(cache().numGroups(), model.numGroups());
  cachedKeys.resize(model.numGroups());
  callbacks.onToken = [this](const RequestResult &r, int32_t token) {
    tokenReported(r, token);
  };
  callbacks.onFinish = [this](const RequestResult &r) { finished(r); };
  tracked.resize(mix.requests.size());
  for (size_t i = 0; i < tracked.size(); ++i) {
    tracked[i].spec = &mix.requests[i];
    tracked[i].tokens = mix.requests[i].request.promptIds;
    tracked[i].keys = HashModel::chains(tracked[i].tokens);
    learn(tracked[i], i);
  }
  counts.mixes = 1;
  counts.requests = tracked.size();
}

void MixRun::run() {
  ASSERT_NO_FATAL_FAILURE(start());
  constexpr int64_t kMaxSteps = 20000;
  int64_t lastArrival = 0;
  for (const MixRequest &m : mix.requests)
    lastArrival = std::max(lastArrival, m.arrival);
  for (int64_t step = 0; step < kMaxSteps; ++step) {
    SCOPED_TRACE("before step " + std::to_string(step));
    submitArrivals(step);
    cancelDue(step);
    if (testing::Test::HasFailure())
      return;
    if (!engine->hasWork() && step >= lastArrival)
      break;
    if (!engine->hasWork())
      continue;
    stepRows.clear();
    Status stepped = engine->step(callbacks);
    ASSERT_TRUE(stepped.ok()) << stepped.message();
    ++counts.steps;
    afterStep();
    checkAccounting();
    snapshotCache();
    if (testing::Test::HasFailure())
      return;
  }
  ASSERT_FALSE(engine->hasWork()) << "no end after " << kMaxSteps << " steps";
  checkOutputs();
}

void MixRun::submitArrivals(int64_t step) {
  for (size_t i = 0; i < tracked.size(); ++i) {
    Tracked &r = tracked[i];
    if (r.spec->arrival != step)
      continue;
    StatusOr<Ticket> ticket = engine->submit(r.spec->request);
    ASSERT_TRUE(ticket.ok())
        << r.spec->request.id << ": " << ticket.status().message();
    r.ticket = *ticket;
    r.state = State::Waiting;
    byTicket[r.ticket] = i;
  }
}

void MixRun::cancelDue(int64_t step) {
  bool any = false;
  for (Tracked &r : tracked)
    if (r.spec->cancelAt == step) {
      cancel(r);
      any = true;
    }
  if (!any)
    return;
  checkRunning();
  checkAccounting();
}

// Wherever it is; a finished request's ticket is no error, and neither is a
// second cancellation.
void MixRun::cancel(Tracked &r) {
  const int64_t prompt = r.spec->request.promptIds.size();
  if (r.state == State::Waiting)
    ++counts.cancelledWaiting;
  if (r.state == State::Running) {
    ++(r.computed < prompt ? counts.cancelledInPrefill
                           : counts.cancelledInDecode);
    ended.push_back(r.seq);
    running.erase(std::find(running.begin(), running.end(), r.ticket));
  }
  EXPECT_TRUE(engine->cancel(r.ticket).ok()) << r.spec->request.id;
  EXPECT_TRUE(engine->cancel(r.ticket).ok()) << r.spec->request.id;
  if (r.state != State::Finished)
    r.state = State::Cancelled;
}

// Registers the key ending each full block of r's tokens not seen yet.
void MixRun::learn(Tracked &r, size_t index) {
  for (; r.learned < r.tokens.size(); ++r.learned)
    if ((r.learned + 1) % blockSize() == 0)
      blockOwners.emplace(r.keys[r.learned],
                          std::make_pair(index, (int64_t)r.learned + 1));
}

void MixRun::tokenReported(const RequestResult &result, int32_t token) {
  Tracked &r = at(result.ticket);
  const int64_t prompt = r.spec->request.promptIds.size();
  EXPECT_EQ(r.state, State::Running) << result.id;
  // Sampled once every known token is computed, and reported in order.
  EXPECT_EQ(r.computed, (int64_t)r.tokens.size()) << result.id;
  EXPECT_EQ((int64_t)result.generatedIds.size(),
            (int64_t)r.tokens.size() - prompt + 1)
      << result.id;
  EXPECT_EQ(result.generatedIds.back(), token) << result.id;
  r.keys.push_back(HashModel::chain(r.keys.back(), token, r.tokens.size()));
  r.tokens.push_back(token);
  learn(r, byTicket.at(result.ticket));
}

void MixRun::finished(const RequestResult &result) {
  Tracked &r = at(result.ticket);
  EXPECT_EQ(r.state, State::Running) << result.id;
  r.state = State::Finished;
  r.result = result;
}

//===--- Checks of a step before it runs (S1 - S5) ------------------------===//

Status MixRun::checkStep(const StepInput &in) {
  const std::vector<std::pair<Ticket, kv::SeqId>> batch =
      engine->runningSequences();
  EXPECT_EQ(in.numSeqs, (int64_t)batch.size());
  EXPECT_LE(in.numSeqs, mix.options.maxBatch);
  EXPECT_LE((int64_t)in.ids.size(), mix.options.maxStepTokens);
  std::vector<std::vector<int32_t>> rows(batch.size());
  for (size_t t = 0; t < in.seqRows.size(); ++t)
    if (in.seqRows[t] >= 0 && in.seqRows[t] < (int64_t)rows.size())
      rows[in.seqRows[t]].push_back(t);
  std::vector<Tracked *> rowRequests;
  std::vector<int64_t> wanted, begins;
  for (const auto &[ticket, seq] : batch) {
    Tracked &r = at(ticket);
    if (r.state == State::Waiting)
      admitted(r, seq);
    EXPECT_EQ(r.state, State::Running) << r.spec->request.id;
    EXPECT_EQ(r.seq, seq) << r.spec->request.id;
    begins.push_back(cache().numComputedTokens(seq));
    wanted.push_back(std::min<int64_t>(r.tokens.size() - begins.back(),
                                       maxChunk(r.spec->request)));
    rowRequests.push_back(&r);
  }
  checkBudget(rows, wanted);
  std::vector<bool> isLogitRow(in.ids.size(), false);
  for (int32_t t : in.logitRows)
    if (t >= 0 && t < (int32_t)in.ids.size())
      isLogitRow[t] = true;
  for (size_t s = 0; s < rows.size(); ++s)
    checkRow(in, rows[s], isLogitRow, *rowRequests[s], begins[s]);
  checkTablesOfStep(in, rowRequests);
  for (size_t s = 0; s < rows.size(); ++s) {
    Tracked &r = *rowRequests[s];
    r.begin = begins[s];
    r.computed = begins[s] + rows[s].size();
    r.computedAny |= !rows[s].empty();
    r.partialPromptChunks +=
        r.computed < (int64_t)r.spec->request.promptIds.size();
    stepRows.push_back(r.ticket);
  }
  return testing::Test::HasFailure()
             ? Status::error("the step failed the checks above")
             : Status::success();
}

// Every decode token (a request with one token to compute), then prompt
// chunks in batch order while the budget lasts. A request the engine
// admitted and preempted within the step took budget the test cannot see,
// so the rows get at most that where allocations can fail.
void MixRun::checkBudget(const std::vector<std::vector<int32_t>> &rows,
                         const std::vector<int64_t> &wanted) {
  int64_t budget = mix.options.maxStepTokens;
  for (size_t s = 0; s < rows.size(); ++s)
    if (wanted[s] == 1) {
      EXPECT_EQ(rows[s].size(), 1u) << "decode row " << s;
      --budget;
    }
  for (size_t s = 0; s < rows.size(); ++s) {
    if (wanted[s] == 1)
      continue;
    const int64_t expected = std::min(wanted[s], budget);
    budget -= expected;
    if (mix.roomy)
      EXPECT_EQ((int64_t)rows[s].size(), expected) << "prompt row " << s;
    else
      EXPECT_LE((int64_t)rows[s].size(), expected) << "prompt row " << s;
  }
}

void MixRun::checkRow(const StepInput &in, const std::vector<int32_t> &row,
                      const std::vector<bool> &isLogitRow, const Tracked &r,
                      int64_t begin) {
  const Request &q = r.spec->request;
  const int64_t end = begin + row.size(), prompt = q.promptIds.size();
  ASSERT_LE(end, (int64_t)r.tokens.size()) << q.id;
  for (size_t i = 0; i < row.size(); ++i) {
    const int32_t t = row[i], p = in.positions[t];
    ASSERT_EQ(p, begin + (int64_t)i) << q.id << " token " << t;
    EXPECT_EQ(in.ids[t], r.tokens[p]) << q.id << " position " << p;
    EXPECT_EQ(in.generated[t], p >= prompt ? 1 : 0) << q.id << " at " << p;
    const bool sampled = end == (int64_t)r.tokens.size() && p == end - 1;
    const bool recorded = q.recordLogits && p >= r.nextLogitsRow;
    EXPECT_EQ(isLogitRow[t], sampled || recorded)
        << q.id << " logits of position " << p;
  }
}

void MixRun::checkTablesOfStep(const StepInput &in,
                               const std::vector<Tracked *> &rows) {
  for (int64_t group = 0; group < model.numGroups(); ++group) {
    const int64_t width = in.tableWidth;
    for (size_t s = 0; s < rows.size(); ++s) {
      const std::vector<kv::BlockId> &table =
          cache().blockTable(rows[s]->seq, group);
      for (int64_t k = 0; k < width; ++k)
        EXPECT_EQ(in.tables[group][s * width + k],
                  k < (int64_t)table.size() ? table[k] : kv::kNullBlock)
            << "row " << s << " group " << group << " logical block " << k;
    }
    // Writes go to blocks no one else reads and the cache does not keep.
    const kv::BlockPool &pool = cache().pool();
    for (size_t t = 0; t < in.ids.size(); ++t) {
      const int64_t s = in.seqRows[t], k = in.positions[t] / blockSize();
      const int32_t block = k < width ? in.tables[group][s * width + k] : -1;
      if (block < 0 || block >= pool.numBlocks())
        continue; // the hash model reports it
      EXPECT_TRUE(pool.refCount(block) == 1 && !pool.isCached(block))
          << "position " << in.positions[t] << " of row " << s
          << " is written into block " << block << " of group " << group
          << ", held " << pool.refCount(block) << " times, "
          << (pool.isCached(block) ? "cached" : "uncached");
    }
  }
}

void MixRun::admitted(Tracked &r, kv::SeqId seq) {
  const Request &q = r.spec->request;
  const int64_t cap =
      r.admittedBefore && q.recordLogits ? r.nextLogitsRow : kNoCap;
  const int64_t reused = predictedReuse(r, cap);
  EXPECT_EQ(cache().numComputedTokens(seq), reused)
      << q.id << " admitted with " << r.tokens.size() << " tokens "
      << (r.admittedBefore ? "again" : "first");
  EXPECT_EQ(cache().numTokens(seq), (int64_t)r.tokens.size()) << q.id;
  if (!r.admittedBefore) {
    r.cachedTokens = reused;
    r.nextLogitsRow = std::max(reused, q.recordLogitsFrom);
  } else {
    ++counts.readmissions;
  }
  r.admittedBefore = true;
  r.state = State::Running;
  r.seq = seq;
  r.begin = r.computed = r.admittedAt = reused;
  running.push_back(r.ticket);
}

// The largest L = mB < n, at most `cap`, for which every group caches the
// blocks the query at L sees: [firstVisibleBlock(L), m). Caching needs no
// more: a cached block keeps its prefix-tree node and the node's ancestors,
// and the caches do not change between the last step and an admission.
int64_t MixRun::predictedReuse(const Tracked &r, int64_t cap) const {
  if (!mix.options.prefixCache)
    return 0;
  const int64_t b = blockSize();
  for (int64_t m = (r.tokens.size() - 1) / b; m > 0; --m) {
    if (m * b > cap)
      continue;
    bool cached = true;
    for (int64_t group = 0; group < model.numGroups(); ++group)
      for (int64_t k = firstVisibleBlock(group, m * b); k < m && cached; ++k)
        cached = cachedKeys[group].count(r.keys[(k + 1) * b - 1]) != 0;
    if (cached)
      return m * b;
  }
  return 0;
}

//===--- Checks after a step (K1) -----------------------------------------===//

void MixRun::afterStep() {
  std::vector<Ticket> expected;
  for (Ticket ticket : stepRows) {
    Tracked &r = at(ticket);
    if (r.state == State::Finished) {
      ended.push_back(r.seq);
      continue;
    }
    expected.push_back(ticket);
    r.nextLogitsRow = std::max(r.nextLogitsRow, r.computed);
  }
  // Requests that ran before and are not in the step were preempted.
  for (Ticket ticket : running) {
    Tracked &r = at(ticket);
    if (std::find(stepRows.begin(), stepRows.end(), ticket) != stepRows.end())
      continue;
    ++counts.preemptions;
    preemptionsCounted += r.computed > r.admittedAt;
    r.admittedBefore &= r.computedAny;
    ended.push_back(r.seq);
    r.state = State::Waiting;
    r.seq = -1;
  }
  running = expected;
  EXPECT_EQ(engine->stats().preemptions, preemptionsCounted);
  checkRunning();
}

void MixRun::checkRunning() {
  std::vector<Ticket> tickets;
  for (const auto &[ticket, seq] : engine->runningSequences())
    tickets.push_back(ticket);
  EXPECT_EQ(tickets, running) << "the running requests";
  int64_t waiting = 0;
  for (const Tracked &r : tracked)
    waiting += r.state == State::Waiting;
  EXPECT_EQ(engine->numWaiting(), waiting);
  for (Ticket ticket : running) {
    const Tracked &r = at(ticket);
    ASSERT_TRUE(cache().hasSequence(r.seq)) << r.spec->request.id;
    EXPECT_EQ(cache().numComputedTokens(r.seq), r.computed)
        << r.spec->request.id;
    EXPECT_EQ(cache().numTokens(r.seq), (int64_t)r.tokens.size())
        << r.spec->request.id;
  }
  for (kv::SeqId seq : ended)
    EXPECT_FALSE(cache().hasSequence(seq)) << "sequence " << seq;
}

//===--- Block accounting (K2 - K5) ---------------------------------------===//

void MixRun::checkAccounting() {
  // Per block of the pool: the table entries naming it and their group.
  std::vector<int64_t> holders(mix.options.numBlocks, 0);
  std::vector<int64_t> holderGroup(mix.options.numBlocks, -1);
  for (int64_t group = 0; group < model.numGroups(); ++group)
    for (Ticket ticket : running)
      checkTables(at(ticket), group, holders, holderGroup);
  checkPool(holders, holderGroup);
}

void MixRun::checkTables(const Tracked &r, int64_t group,
                         std::vector<int64_t> &holders,
                         std::vector<int64_t> &holderGroup) {
  if (!cache().hasSequence(r.seq))
    return; // checkRunning reports it
  const std::vector<kv::BlockId> &table = cache().blockTable(r.seq, group);
  const std::string who = r.spec->request.id + " group " + std::to_string(group);
  EXPECT_EQ((int64_t)table.size(), ceilDiv(r.computed, blockSize())) << who;
  const int64_t released = firstVisibleBlock(group, r.begin);
  for (int64_t k = 0; k < (int64_t)table.size(); ++k) {
    EXPECT_EQ(table[k] == kv::kNullBlock, k < released)
        << who << " logical block " << k << " is block " << table[k];
    if (table[k] < 0 || table[k] >= mix.options.numBlocks)
      continue;
    EXPECT_TRUE(holderGroup[table[k]] == -1 || holderGroup[table[k]] == group)
        << who << " logical block " << k << " is block " << table[k]
        << ", held in group " << holderGroup[table[k]] << " too";
    holderGroup[table[k]] = group;
    ++holders[table[k]];
    checkHeldBlock(group, table[k], r, k);
  }
}

std::string slotText(const HashModelExecutor::Slot &slot) {
  return "position " + std::to_string(slot.position) + " token " +
         std::to_string(slot.token) + " key " + std::to_string(slot.chain) +
         " of group " + std::to_string(slot.group);
}

// The KV of positions [kB, min((k+1)B, computed)) of r's own tokens.
void MixRun::checkHeldBlock(int64_t group, int32_t block, const Tracked &r,
                            int64_t k) {
  const int64_t b = blockSize();
  for (int64_t j = k * b; j < std::min((k + 1) * b, r.computed); ++j) {
    const HashModelExecutor::Slot &slot = hash->slot(block, j % b);
    if (slot.position == j && slot.token == r.tokens[j] &&
        slot.chain == r.keys[j] && slot.group == group)
      continue;
    ADD_FAILURE() << r.spec->request.id << " group " << group << " block "
                  << block << " (logical " << k << ") holds " << slotText(slot)
                  << " at position " << j << ", not token " << r.tokens[j]
                  << " key " << r.keys[j];
    return;
  }
}

void MixRun::checkPool(const std::vector<int64_t> &holders,
                       const std::vector<int64_t> &holderGroup) {
  const kv::BlockPool &pool = cache().pool();
  const int64_t b = blockSize();
  std::vector<int64_t> used(model.numGroups(), 0), evictable(used);
  for (int32_t block = 0; block < pool.numBlocks(); ++block) {
    EXPECT_EQ(pool.refCount(block), holders[block]) << "block " << block;
    EXPECT_TRUE(holders[block] <= 1 || pool.isCached(block))
        << "block " << block << " is shared, uncached";
    if (holders[block] > 0)
      ++used[holderGroup[block]];
    if (!pool.isCached(block))
      continue;
    // An unreferenced cached block belongs to the group that wrote it.
    const int64_t group = holders[block] > 0 ? holderGroup[block]
                                             : hash->slot(block, b - 1).group;
    checkCachedBlock(group, block);
    if (holders[block] == 0 && group >= 0)
      ++evictable[group];
  }
  int64_t usedInAll = 0, evictableInAll = 0;
  for (int64_t group = 0; group < model.numGroups(); ++group) {
    EXPECT_EQ(pool.numUsedBlocks(group), used[group]) << "group " << group;
    EXPECT_EQ(pool.numEvictableBlocks(group), evictable[group])
        << "group " << group;
    usedInAll += used[group];
    evictableInAll += evictable[group];
  }
  EXPECT_EQ(pool.numUsedBlocks(), usedInAll);
  EXPECT_EQ(pool.numEvictableBlocks(), evictableInAll);
  EXPECT_EQ(pool.numFreeBlocks(),
            pool.numBlocks() - usedInAll - evictableInAll);
}

// A full block of consecutive positions whose keys continue one another and
// end where some request's tokens end a block, with that request's keys.
void MixRun::checkCachedBlock(int64_t group, int32_t block) {
  const int64_t b = blockSize();
  const HashModelExecutor::Slot &last = hash->slot(block, b - 1);
  auto owner = blockOwners.find(last.chain);
  if (owner == blockOwners.end() || owner->second.second != last.position + 1) {
    ADD_FAILURE() << "cached block " << block << " of group " << group
                  << " ends with " << slotText(last)
                  << ", the end of no request's block";
    return;
  }
  const Tracked &r = tracked[owner->second.first];
  for (int64_t i = 0; i < b; ++i) {
    const HashModelExecutor::Slot &slot = hash->slot(block, i);
    const int64_t j = last.position + 1 - b + i;
    if (slot.position != j || slot.chain != r.keys[j] || slot.group != group) {
      ADD_FAILURE() << "cached block " << block << " of group " << group
                    << " holds " << slotText(slot) << " in slot " << i
                    << ", not the key of position " << j << " of "
                    << r.spec->request.id;
      return;
    }
  }
}

void MixRun::snapshotCache() {
  const int64_t b = blockSize();
  const kv::BlockPool &pool = cache().pool();
  std::vector<std::set<uint64_t>> keys(model.numGroups());
  for (int32_t block = 0; block < pool.numBlocks(); ++block)
    if (pool.isCached(block)) {
      const HashModelExecutor::Slot &last = hash->slot(block, b - 1);
      keys[last.group].insert(last.chain);
    }
  for (int64_t group = 0; group < model.numGroups(); ++group) {
    for (uint64_t key : cachedKeys[group])
      counts.evictions += keys[group].count(key) == 0;
    cachedKeys[group] = std::move(keys[group]);
  }
}

//===--- Outputs (E1) -----------------------------------------------------===//

void MixRun::checkOutputs() {
  EXPECT_EQ(cache().pool().numUsedBlocks(), 0);
  for (const Tracked &r : tracked) {
    EXPECT_TRUE(r.state == State::Finished || r.state == State::Cancelled)
        << r.spec->request.id;
    if (r.state == State::Finished)
      checkOutput(r);
  }
}

void MixRun::checkOutput(const Tracked &r) {
  const Request &q = r.spec->request;
  const RequestResult &got = r.result;
  SCOPED_TRACE("request " + q.id);
  EXPECT_EQ(got.cachedTokens, r.cachedTokens);
  counts.prefixHits += got.cachedTokens > 0;
  counts.cachedTokens += got.cachedTokens;
  EXPECT_EQ(got.firstLogitsRow, std::max(r.cachedTokens, q.recordLogitsFrom));
  counts.eosFinishes += (int64_t)got.generatedIds.size() < q.maxNewTokens;
  counts.chunkedPrompts += r.partialPromptChunks > 0;
  if (q.topLogprobs >= 0)
    EXPECT_EQ(got.logprobs.size(), got.generatedIds.size());
  if (r.spec->expected) {
    EXPECT_EQ(got.generatedIds, *r.spec->expected);
    const int64_t vocab = model.vocab();
    const int64_t rows = q.promptIds.size() + got.generatedIds.size() - 1;
    if (q.recordLogits)
      ASSERT_EQ((int64_t)got.logits.size(),
                std::max<int64_t>(0, rows - got.firstLogitsRow) * vocab);
    std::vector<float> row(vocab);
    for (int64_t p = got.firstLogitsRow; q.recordLogits && p < rows; ++p) {
      model.logitsAt(r.keys, p, row.data());
      ASSERT_TRUE(
          std::equal(row.begin(), row.end(),
                     got.logits.begin() + (p - got.firstLogitsRow) * vocab))
          << "logits of position " << p;
    }
  }
  compareWithSolo(r);
}

void MixRun::compareWithSolo(const Tracked &r) {
  const Request &q = r.spec->request;
  const RequestResult &got = r.result;
  const RequestResult alone = solo(q);
  ++counts.soloRuns;
  ASSERT_EQ(got.generatedIds, alone.generatedIds) << "the solo run's tokens";
  // Float noise only, on the real model: each row is computed the same way.
  const double tolerance = makeReal ? 1e-6 : 0;
  const int64_t vocab = mix.manifest.config.vocabSize;
  // Rows served from the cache are not recorded.
  const int64_t skip = std::min<int64_t>(
      alone.logits.size(), (got.firstLogitsRow - alone.firstLogitsRow) * vocab);
  ASSERT_EQ((int64_t)got.logits.size(), (int64_t)alone.logits.size() - skip);
  for (size_t i = 0; i < got.logits.size(); ++i)
    ASSERT_NEAR(got.logits[i], alone.logits[skip + i], tolerance)
        << "logit " << i % vocab << " of row " << i / vocab;
  ASSERT_EQ(got.logprobs.size(), alone.logprobs.size());
  for (size_t t = 0; t < got.logprobs.size(); ++t) {
    EXPECT_NEAR(got.logprobs[t].logprob, alone.logprobs[t].logprob, tolerance);
    ASSERT_EQ(got.logprobs[t].top.size(), alone.logprobs[t].top.size());
    for (size_t k = 0; k < got.logprobs[t].top.size(); ++k)
      EXPECT_EQ(got.logprobs[t].top[k].first, alone.logprobs[t].top[k].first);
  }
}

// Alone on a fresh engine with the prefix cache off and room to spare.
RequestResult MixRun::solo(const Request &r) {
  EngineOptions options = mix.options;
  options.maxBatch = 1;
  options.prefixCache = false;
  options.numBlocks =
      (int64_t)mix.manifest.kvGroups.size() *
      (ceilDiv(r.promptIds.size() + r.maxNewTokens, options.blockSize) + 2);
  std::unique_ptr<Executor> executor =
      makeReal ? makeReal(options.blockSize, options.numBlocks)
               : std::make_unique<HashModelExecutor>(
                     mix.manifest, options.blockSize, options.numBlocks);
  StatusOr<std::unique_ptr<Engine>> e =
      Engine::create(*executor, mix.manifest, options);
  EXPECT_TRUE(e.ok()) << e.status().message();
  if (!e.ok())
    return {};
  StatusOr<std::vector<RequestResult>> results = (*e)->run({r});
  EXPECT_TRUE(results.ok()) << results.status().message();
  return results.ok() ? results->front() : RequestResult();
}

//===----------------------------------------------------------------------===//
// The tests
//===----------------------------------------------------------------------===//

/// tiny-cohere2's manifest without its artifact: the hash model's base.
const Manifest &tinyManifest() {
  static const Manifest manifest = [] {
    StatusOr<ModelConfig> config =
        ModelConfig::fromFile(std::string(COHERE2C_TEST_DATA_DIR) +
                              "/models/tiny-cohere2/config.json");
    EXPECT_TRUE(config.ok()) << config.status().message();
    return Manifest::ofConfig(*config, "host", "f32");
  }();
  return manifest;
}

/// Serves the mixes of seeds [first, last]; stops at the first that fails.
MixStats serveMixes(uint32_t first, uint32_t last, const Manifest &base,
                    ExecutorFactory makeReal) {
  MixStats total;
  for (uint32_t seed = first; seed <= last; ++seed) {
    const Mix mix = MixGenerator(seed, base, !makeReal).generate();
    SCOPED_TRACE(mix.describe());
    MixRun run(mix, makeReal);
    run.run();
    total.add(run.stats());
    if (testing::Test::HasFailure())
      break;
  }
  return total;
}

void report(const MixStats &stats) {
  std::cout << "[  model   ] " << stats.describe() << "\n"
            << "[  model   ] checked: " << kInvariants << std::endl;
  testing::Test::RecordProperty("mixes", std::to_string(stats.mixes));
  testing::Test::RecordProperty("requests", std::to_string(stats.requests));
  testing::Test::RecordProperty("steps", std::to_string(stats.steps));
  testing::Test::RecordProperty("invariants", kInvariants);
}

struct Seeds {
  uint32_t first, last;
};

void PrintTo(const Seeds &seeds, std::ostream *out) {
  *out << "seeds " << seeds.first << " to " << seeds.last;
}

class EngineHashModelTest : public testing::TestWithParam<Seeds> {};

TEST_P(EngineHashModelTest, MixesAgreeWithTheReferenceModel) {
  const Seeds seeds = GetParam();
  MixStats stats = serveMixes(seeds.first, seeds.last, tinyManifest(), {});
  report(stats);
  if (HasFailure())
    return;
  // That the mixes reach what they are meant to.
  EXPECT_GT(stats.preemptions, 0);
  EXPECT_GT(stats.prefixHits, 0);
  EXPECT_GT(stats.evictions, 0);
  EXPECT_GT(stats.cancelledInPrefill, 0);
  EXPECT_GT(stats.cancelledInDecode, 0);
  EXPECT_GT(stats.eosFinishes, 0);
  EXPECT_GT(stats.chunkedPrompts, 0);
}

// 4000 mixes in shards of 1000, which ctest may run side by side.
INSTANTIATE_TEST_SUITE_P(Seeds, EngineHashModelTest,
                         testing::Values(Seeds{1, 1000}, Seeds{1001, 2000},
                                         Seeds{2001, 3000}, Seeds{3001, 4000}),
                         [](const testing::TestParamInfo<Seeds> &info) {
                           return "seeds_" + std::to_string(info.param.first) +
                                  "_to_" + std::to_string(info.param.last);
                         });

TEST(EngineTinyModelTest, MixesEqualTheirSoloRuns) {
  std::unique_ptr<ReferenceModel> tiny = ReferenceModel::load("tiny-cohere2");
  ASSERT_TRUE(tiny->artifact && tiny->weights);
  ExecutorFactory makeReal = [&](int64_t blockSize, int64_t numBlocks) {
    auto made = HostExecutor::create(*tiny->artifact, *tiny->weights, numBlocks,
                                     blockSize);
    EXPECT_TRUE(made.ok()) << made.status().message();
    return made.ok() ? std::unique_ptr<Executor>(std::move(*made)) : nullptr;
  };
  MixStats stats = serveMixes(1, 24, tiny->artifact->manifest(), makeReal);
  report(stats);
  if (!HasFailure())
    EXPECT_GT(stats.prefixHits, 0);
}

// cachedTokens is what the prefix cache served at the admission a request
// computes from. An admission undone within its step to make room for an
// earlier request, before the request computed anything, does not count:
// its blocks may be evicted before the request is admitted again.
//
// Full layers alone, B = 2, 5 blocks, chunks of 4. P (prompt p, 8 tokens)
// leaves its 4 blocks cached. R1 (8 other tokens) and R2 (prompt p) arrive
// together: R2 reuses 6 tokens (3 blocks) and fits with the one block left,
// but R1, first in the batch, takes 2 for its chunk, so R2 is preempted
// before computing; R1's next chunk evicts p's blocks 1 and 2, and R2,
// admitted once R1 is done, reuses 2 tokens and computes from there.
TEST(EngineModelRegressionTest, CachedTokensCountTheAdmissionThatComputes) {
  Manifest m = tinyManifest();
  m.config.layerKinds.assign(m.config.numLayers, LayerKind::Full);
  m.config.vocabSize = 64;
  m.kvGroups = kvGroupsFor(m.config);
  EngineOptions options;
  options.blockSize = 2;
  options.numBlocks = 5;
  options.prefillChunk = 4;
  options.maxBatch = 2;
  options.ignoreEos = true;
  HashModelExecutor hash(m, options.blockSize, 5);
  std::vector<StepInput> steps;
  CheckedExecutor recorder;
  recorder.hash = &hash;
  recorder.check = [&](const StepInput &input) {
    steps.push_back(input);
    return Status::success();
  };
  auto e = Engine::create(recorder, m, options);
  ASSERT_TRUE(e.ok()) << e.status().message();
  auto request = [](std::string id, Tokens prompt) {
    Request r;
    r.id = std::move(id);
    r.promptIds = std::move(prompt);
    r.maxNewTokens = 1;
    return r;
  };
  const Tokens p = {1, 2, 3, 4, 5, 6, 7, 8};
  ASSERT_TRUE((*e)->run({request("P", p)}).ok());
  size_t firstStep = steps.size();
  auto served = (*e)->run(
      {request("R1", {9, 10, 11, 12, 13, 14, 15, 16}), request("R2", p)});
  ASSERT_TRUE(served.ok()) << served.status().message();
  // R2's first computed position: the first token of p's in the steps
  // (R1's tokens differ from p's at every position).
  int64_t firstComputed = -1;
  for (size_t s = firstStep; s < steps.size(); ++s) {
    const StepInput &step = steps[s];
    for (size_t t = 0; t < step.ids.size() && firstComputed < 0; ++t)
      if (step.ids[t] == p[step.positions[t]])
        firstComputed = step.positions[t];
  }
  EXPECT_EQ(firstComputed, 2);
  EXPECT_EQ(served->at(1).cachedTokens, firstComputed);
}

} // namespace
} // namespace cohere2c::test
