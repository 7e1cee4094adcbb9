//===- Engine.h - Continuous batching over the paged KV cache -------------===//
//
// Serves requests to completion: admits them while the batch has room and
// the KV cache has blocks, runs steps that mix prefill chunks and decode
// tokens of every running request, samples, and preempts (then recomputes)
// the most recently admitted request when blocks run out; nothing is lost.
// The KV cache persists across run() calls, so a later request reuses the
// cached prefix of an earlier one. Not thread-safe.
//
//===----------------------------------------------------------------------===//
#ifndef COHERE2C_RUNTIME_SCHEDULER_ENGINE_H
#define COHERE2C_RUNTIME_SCHEDULER_ENGINE_H

#include "Executor.h"
#include "kv_cache/KVCacheManager.h"
#include "scheduler/Sampler.h"

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace cohere2c {

/// Names a request in flight: submit() returns it, results carry it.
using Ticket = uint64_t;

struct Request {
  std::string id;
  std::vector<int32_t> promptIds;
  int64_t maxNewTokens = 16;
  SamplingParams sampling;
  /// Keep the logits of every computed position from recordLogitsFrom on
  /// (for --logits-out).
  bool recordLogits = false;
  int64_t recordLogitsFrom = 0;
  /// Keep generating past the EOS ids (as EngineOptions::ignoreEos, for
  /// this request alone).
  bool ignoreEos = false;
  /// -1: no log probabilities; 0 to kMaxTopLogprobs: each sampled token's
  /// log probability and this many most likely alternatives
  /// (RequestResult::logprobs).
  int32_t topLogprobs = -1;
};

constexpr int32_t kMaxTopLogprobs = 20;

/// A sampled token's log probability under the model's distribution at its
/// position (log-softmax of the logits, before temperature, top-k and top-p,
/// as vLLM reports them), and the most likely tokens there, most likely
/// first (ties: lower id first).
struct TokenLogprobs {
  float logprob = 0;
  std::vector<std::pair<int32_t, float>> top;
};

struct RequestResult {
  std::string id;
  Ticket ticket = 0;
  std::vector<int32_t> generatedIds;
  /// Prompt tokens whose KV came from the prefix cache at its first
  /// admission (not counting admissions undone to make room for others
  /// before a step computed any of its tokens).
  int64_t cachedTokens = 0;
  /// From the request's submission (for run(): the start of run()).
  double ttftMs = 0, totalMs = 0;
  /// With recordLogits: rows [firstLogitsRow, P + N - 1) of the sequence's
  /// logits, [rows, vocab] f32; row i is the distribution of token i + 1.
  /// firstLogitsRow is the larger of recordLogitsFrom and cachedTokens
  /// (positions before the latter were served from the cache).
  int64_t firstLogitsRow = 0;
  std::vector<float> logits;
  /// With topLogprobs >= 0: one per generated token.
  std::vector<TokenLogprobs> logprobs;
};

/// EngineOptions::maxStepTokens by default: room for a 8192-token prompt in
/// one step (the longest bench/run.sh times) and a batch of decode tokens.
constexpr int64_t kDefaultMaxStepTokens = 8192;

struct EngineOptions {
  int64_t blockSize = 16;
  /// Blocks in the KV pool every KV group draws from (a block: blockSize
  /// tokens of the layers of one group); 0 = what the target leaves (cuda:
  /// the device memory gpuMemoryUtilization allows beyond the weights and
  /// activations; host: defaultKVBlocks).
  int64_t numBlocks = 0;
  /// Most prompt tokens of one request per step; 0 = the whole prompt (a
  /// preempted request recomputes its prompt + generated tokens in chunks
  /// of its prompt's length).
  int64_t prefillChunk = 0;
  /// Most requests in flight (1 serves them one after another).
  int64_t maxBatch = 1;
  /// Most tokens of one step, prefill chunks and decode tokens together
  /// (vLLM's max_num_batched_tokens): decode tokens are scheduled first,
  /// then prompt chunks while the budget lasts, so that a long prompt is
  /// computed in chunks between decode steps. At least maxBatch. The cuda
  /// executor reserves the activations of a step this large.
  int64_t maxStepTokens = kDefaultMaxStepTokens;
  /// cuda: the fraction of the device's memory the engine may take (vLLM's
  /// gpu_memory_utilization), memory other processes hold included; the KV
  /// cache gets what the weights and the activations leave when numBlocks
  /// is 0.
  double gpuMemoryUtilization = 0.9;
  bool prefixCache = true;
  bool ignoreEos = false;
  /// The tokens that end a request (unless ignoreEos); default: config.json's
  /// eos_token_id. A model's generation_config.json may name others
  /// (text::ModelText::eosTokenIds).
  std::optional<std::vector<int64_t>> eosTokenIds;
};

/// Most host memory the default KV cache of a host-target artifact takes.
constexpr int64_t kMaxDefaultHostKVBytes = int64_t(4) << 30; // 4 GiB

/// The most blocks a sequence of `positions` positions, computed at most
/// `chunk` at a time, holds at once in `group` (KVCacheManager.h): all
/// ceil(positions / B) in a full group; in a group of window W the fewer of
/// that and ceil((min(W, positions) + chunk) / B) + 2 (the window, the
/// step's new positions and two partial blocks).
int64_t kvBlocksHeld(const KVGroup &group, int64_t positions, int64_t chunk,
                     int64_t blockSize);

/// The KV blocks one sequence of the whole context (max_position_embeddings)
/// holds at most: kvBlocksHeld summed over the groups, prefilled in chunks
/// of options.prefillChunk or up to options.maxStepTokens.
int64_t kvBlocksPerContext(const Manifest &manifest,
                           const EngineOptions &options);

/// What a KV pool of options.numBlocks blocks of options.blockSize tokens
/// holds, for reports: "15,520 blocks of 16 tokens x 16 layers shared by 4
/// KV groups (62,080 tokens in every group; whole 131,072-token contexts at
/// once: 1)" (kvBlocksPerContext).
std::string kvCapacityText(const Manifest &manifest,
                           const EngineOptions &options);

/// KV blocks when EngineOptions::numBlocks is 0: room for maxBatch
/// sequences of the whole context (kvBlocksPerContext); for the host target,
/// capped so that the pool takes at most kMaxDefaultHostKVBytes
/// (kvBytesPerBlock), and at least 1.
int64_t defaultKVBlocks(const Manifest &manifest, const EngineOptions &options);

/// Steps are prefill steps when they compute a prompt token or several
/// tokens of one sequence (a chunk, also of generated tokens recomputed
/// after a preemption), else decode steps (one generated token per
/// sequence); tokens and times are counted by the kind of their step, so
/// that tokens / time is each kind's rate. A preemption is an eviction of
/// a sequence that had computed tokens since its admission.
struct EngineStats {
  int64_t steps = 0, prefillTokens = 0, decodeTokens = 0, preemptions = 0;
  double prefillMs = 0, decodeMs = 0;
  int64_t peakKVBytes = 0; // blocks referenced by live sequences
};

/// What run() reports while requests progress; either may be empty.
struct RunCallbacks {
  /// Each sampled token of a request, in order, once it is final (a
  /// preempted request recomputes its tokens but never samples them again):
  /// `result` holds the request's tokens so far, `token` last among them.
  std::function<void(const RequestResult &result, int32_t token)> onToken;
  /// Each request as it finishes, after its last onToken.
  std::function<void(const RequestResult &)> onFinish;
};

class Engine {
public:
  /// Errors: options out of range (naming the option).
  static StatusOr<std::unique_ptr<Engine>>
  create(Executor &executor, const Manifest &manifest, EngineOptions options);
  ~Engine();

  /// Checks a request before it runs: a non-empty prompt, every id in
  /// [0, vocab), prompt + max_new_tokens within max_position_embeddings, and
  /// room for it alone in the numBlocks blocks of the KV pool: kvBlocksHeld
  /// of its P + N - 1 positions (the last sampled token is never fed back)
  /// summed over the groups, chunk being the prefill chunk or the prompt
  /// length P. Errors name the request id and the offending value (for the
  /// KV cache: the blocks needed, per group, and --kv-blocks).
  Status validate(const Request &request) const;

  /// Queues a copy of `request` behind the waiting ones. Error: validate's.
  StatusOr<Ticket> submit(const Request &request);
  /// Ends the request of `ticket` wherever it is (waiting or running),
  /// freeing its KV blocks (its full blocks stay cached); nothing is
  /// reported for it. A finished or unknown ticket is no error.
  Status cancel(Ticket ticket);
  /// Whether a request waits or runs.
  bool hasWork() const { return !waiting_.empty() || !running_.empty(); }
  int64_t numWaiting() const { return waiting_.size(); }
  int64_t numRunning() const { return running_.size(); }
  /// The ticket and KV-cache sequence (kvCache()'s id) of each running
  /// request, in batch order: during Executor::run, the order of the step's
  /// sequence rows. For checks of the KV cache against the requests it serves.
  std::vector<std::pair<Ticket, kv::SeqId>> runningSequences() const;
  /// One step of continuous batching: admits waiting requests in order
  /// while the batch has room and their first chunk fits, computes a chunk
  /// of every running request, samples, and reports the new tokens and the
  /// finished requests to `callbacks` (the finished ones are gone after).
  /// Errors: an executor failure; a request too large for the KV cache
  /// even alone.
  Status step(const RunCallbacks &callbacks);

  /// Serves all requests (validated first; none runs if one is invalid),
  /// reporting progress to `callbacks`; the results come back in the order
  /// of `requests`. Errors: an invalid request (validate), before any runs;
  /// step's.
  StatusOr<std::vector<RequestResult>> run(const std::vector<Request> &requests,
                                           const RunCallbacks &callbacks = {});

  const EngineStats &stats() const { return stats_; }
  const kv::KVCacheManager &kvCache() const { return *kvCache_; }
  /// KV bytes of a block (of any group).
  int64_t bytesPerBlock() const { return bytesPerBlock_; }

private:
  struct Active;
  Engine(Executor &executor, const Manifest &manifest, EngineOptions options);
  /// Most tokens of request `r` computed in one step.
  int64_t maxChunk(const Request &r) const;
  /// Tokens of `a` to compute in the next step.
  int64_t nextChunk(const Active &a) const;
  /// Moves waiting requests to the running batch while they fit.
  Status admit();
  /// Runs one step of the running batch and samples.
  Status runStep();
  struct StepBatch;
  /// The tokens of each running request the next step computes: one for
  /// each that decodes, then prompt chunks in admission order within
  /// maxStepTokens.
  std::vector<int64_t> planChunks() const;
  /// Gives each running request KV slots for its `planned` chunk,
  /// preempting the most recently admitted when blocks run out; the chunks
  /// of the requests still running. Error: a request whose chunk does not
  /// fit even alone.
  StatusOr<std::vector<int64_t>>
  allocateChunks(const std::vector<int64_t> &planned);
  /// The executor's input for `chunks` of the running requests.
  StepBatch batchOf(std::vector<int64_t> chunks) const;
  /// The running requests' block tables, one row per request.
  void fillBlockTables(StepInput &in) const;
  /// A running request's token of the step: -1 where its logits are not
  /// finite; with top_logprobs, its log-probabilities.
  struct Sampled {
    int32_t token = 0;
    std::optional<TokenLogprobs> logprobs;
  };
  /// After the step: the token of each running request that samples (its
  /// chunk reaches the end of its tokens). Requests sample in parallel,
  /// each from its own random stream, so the tokens do not depend on the
  /// threads.
  std::vector<Sampled> sampleTokens(const StepBatch &batch);
  /// After the step: marks running request `a` (row `s` of `batch`)
  /// computed, records its logits, and takes `sampled` (sampleTokens')
  /// once its chunk reaches the end of its tokens, finishing it at
  /// max_new_tokens or EOS. Errors: logits that are not finite; the KV
  /// cache's.
  Status advance(Active &a, const StepBatch &batch, size_t s, Sampled sampled);

  Executor &executor_;
  const Manifest &manifest_;
  EngineOptions options_;
  std::unique_ptr<kv::KVCacheManager> kvCache_;
  int64_t bytesPerBlock_ = 0;
  kv::SeqId nextSeqId_ = 0;
  Ticket nextTicket_ = 1;
  /// Every request in flight, by ticket; waiting_ (in admission order) and
  /// running_ point into it.
  std::map<Ticket, std::unique_ptr<Active>> active_;
  std::vector<Active *> waiting_, running_;
  EngineStats stats_;
  /// The last step's logits ([rows, vocab] f32) or sampled tokens. Kept
  /// from step to step: a batch's rows (65 MB at batch 64 of a
  /// 256000-token vocabulary) newly allocated each step cost more than the
  /// copy that fills them.
  StepOutput output_;
};

} // namespace cohere2c

#endif // COHERE2C_RUNTIME_SCHEDULER_ENGINE_H
