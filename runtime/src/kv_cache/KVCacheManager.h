//===- KVCacheManager.h - Host bookkeeping of the paged KV cache ----------===//
//
// The block tables of every sequence, per KV group, the one block pool all
// groups draw from, and the prefix cache (docs/ARCHITECTURE.md, "The paged KV
// cache"). Only block ids live here; the memory layer maps a block id to the
// address of B tokens' K and V for every layer of a group (the groups hold
// the same number of layers, Manifest.h). Blocks a sliding group releases
// serve any group, as in vLLM's hybrid KV cache manager: past the window a
// sequence's tokens take blocks only in the full groups.
//
// Rules, with B the block size and W a group's window in tokens:
//   - Storage is never cyclic: logical block k of a sequence holds the KV of
//     tokens [kB, (k+1)B) in every group; blockTable(id, g)[k] is its block id.
//   - Full-attention group (W = 0): keeps every block of the sequence.
//   - Sliding group: the query at position p sees keys p - W < j <= p. Before
//     computing from position p, block k is released (its entry becomes
//     kNullBlock) once (k+1)B - 1 <= p - W, i.e. for k < max(0, p-W+1) / B.
//     A sequence thus holds about W + B tokens of blocks per sliding group
//     (W + the new tokens of a step + up to 2B of alignment).
//   - Prefix cache: once every token of a block is computed, the block is
//     hashed (chained XXH3-128 over the parent's hash and its B tokens),
//     confirmed exactly through the PrefixTree, and each group's block of it
//     registered in the pool under (group, hash). Released cached blocks
//     stay evictable until their memory is needed.
//   - Reuse: a request of n tokens starts at the largest L = mB < n for which
//     every group has its blocks covering [max(0, L - W + 1), L) cached
//     ([0, L) for a full group): the keys the query at L sees. Its sliding
//     tables hold kNullBlock below that range. A group the model lacks imposes
//     nothing.
//   - Reference counts: a block in any live block table is never handed out;
//     eviction takes the least recently used unreferenced cached block.
//
// Use, per sequence and step (scheduler and executor):
//     addSequence(id, prompt)        -> L tokens already cached: compute from L
//     allocateSlots(id, n)           -> blocks for positions [computed, +n);
//                                       false: preempt someone (freeSequence)
//     executor writes the KV of those positions through blockTable(id, g)
//     markComputed(id, n)            -> full blocks enter the prefix cache
//     appendTokens(id, {sampled})    -> the decode step's new token
//     freeSequence(id)               -> on finish or preemption; a preempted
//                                       request restarts with addSequence(id,
//                                       prompt + tokens generated so far)
//
// Errors: calls that change state return a Status (or StatusOr) that fails,
// changing nothing, on misuse (unknown or duplicate sequence, counts out of
// range); being out of blocks is not an error but allocateSlots' false.
// Const accessors taking a SeqId require a live sequence (asserted).
//
// Not thread-safe: one scheduler thread owns the KV cache.
//
//===----------------------------------------------------------------------===//
#ifndef COHERE2C_KV_CACHE_KVCACHEMANAGER_H
#define COHERE2C_KV_CACHE_KVCACHEMANAGER_H

#include "Support/Status.h"
#include "kv_cache/BlockPool.h"
#include "kv_cache/PrefixTree.h"

#include <cstdint>
#include <limits>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

namespace cohere2c::kv {

using SeqId = int64_t;

/// One KV group: layers that share a window and block tables.
struct KVGroupSpec {
  std::string name;
  /// Sliding window W in tokens; 0 = full attention.
  int64_t window = 0;
};

class KVCacheManager {
public:
  /// blockSize B > 0 tokens; numBlocks in [1, 2^31) blocks in the pool;
  /// groups non-empty, each with window >= 0. Group g is groups[g] in every
  /// call below. The hasher is a parameter for tests that force collisions.
  /// Fails on invalid arguments with a message naming the field.
  static StatusOr<std::unique_ptr<KVCacheManager>>
  create(int64_t blockSize, int64_t numBlocks, std::vector<KVGroupSpec> groups,
         bool enablePrefixCache, BlockHasher hasher = hashBlock);

  KVCacheManager(const KVCacheManager &) = delete;
  KVCacheManager &operator=(const KVCacheManager &) = delete;

  /// Starts sequence id with the tokens known so far (a prompt, or prompt +
  /// generated tokens when restarting a preempted request; at least one).
  /// Returns L, the number of leading tokens whose KV is served from the
  /// prefix cache (a multiple of B, L < tokens.size(), 0 when the prefix cache
  /// is off); the sequence references those blocks and starts computed at L.
  /// Allocates nothing. Fails if id is live or tokens is empty.
  /// `maxCachedTokens` caps L (a restarted request that must recompute
  /// positions it has not recorded yet passes how far it got).
  StatusOr<int64_t>
  addSequence(SeqId id, const std::vector<int32_t> &tokens,
              int64_t maxCachedTokens = std::numeric_limits<int64_t>::max());

  /// Appends tokens (e.g. the token sampled by a decode step) to the tokens
  /// known for id. Fails if id is not live.
  Status appendTokens(SeqId id, const std::vector<int32_t> &tokens);

  /// Whether allocateSlots(id, numNewTokens) would succeed now, counting the
  /// blocks its sliding-window releases would make available. Fails if id is
  /// not live or numNewTokens < 0.
  StatusOr<bool> canAllocateSlots(SeqId id, int64_t numNewTokens) const;

  /// Before computing positions [c, c + numNewTokens), c = numComputedTokens:
  /// releases the sliding-group blocks that the query at c can no longer see,
  /// in every group, then gives the groups, in group order, blocks for all
  /// logical blocks up to position c + numNewTokens - 1 (evicting LRU cached
  /// blocks of any group as needed). Returns
  /// false, changing nothing, if the pool has fewer free + evictable blocks
  /// than all groups need together: the scheduler then preempts a sequence.
  /// Idempotent until markComputed. Fails if id is not live or numNewTokens <
  /// 0.
  StatusOr<bool> allocateSlots(SeqId id, int64_t numNewTokens);

  /// After the executor wrote the KV of positions [c, c + numTokens): records
  /// them computed; blocks now full are hashed and enter the prefix cache.
  /// Fails, changing nothing, unless those positions have tokens and blocks.
  Status markComputed(SeqId id, int64_t numTokens);

  /// Ends sequence id: drops its references (last logical block first, and
  /// within one logical block the groups in order, so that the start of a
  /// prefix, the part most often shared, is evicted last). Cached
  /// blocks become evictable, others free. Fails if id is not live.
  Status freeSequence(SeqId id);

  bool hasSequence(SeqId id) const;
  /// Block id per logical block of sequence id in group; kNullBlock where
  /// released (sliding window) or not allocated yet.
  const std::vector<BlockId> &blockTable(SeqId id, int64_t group) const;
  /// Tokens known / tokens whose KV is written, for sequence id.
  int64_t numTokens(SeqId id) const;
  int64_t numComputedTokens(SeqId id) const;

  int64_t blockSize() const { return blockSizeTokens; }
  int64_t numGroups() const { return static_cast<int64_t>(groups.size()); }
  const KVGroupSpec &groupSpec(int64_t group) const { return groups[group]; }
  /// The pool every group draws from (block counts: used, free, evictable,
  /// available; used and evictable per group).
  const BlockPool &pool() const { return *blockPool; }

private:
  struct Sequence {
    std::vector<int32_t> tokens;
    int64_t numComputed = 0;
    /// One table per group.
    std::vector<std::vector<BlockId>> blockTables;
    /// Leading full blocks hashed into the prefix tree, and the node of the
    /// last one (referenced by this sequence) that the next block chains to.
    int64_t numHashedBlocks = 0;
    const PrefixNode *hashTail = nullptr;
    /// Set when a block's hash collided: later blocks are not cached.
    bool hashChainBroken = false;
  };

  KVCacheManager(int64_t blockSize, int64_t numBlocks,
                 std::vector<KVGroupSpec> groups, bool enablePrefixCache,
                 BlockHasher hasher);

  /// Logical block index of the first block the query at position p reads in
  /// group: max(0, p - W + 1) / B for a sliding group, 0 for a full one.
  int64_t firstVisibleBlock(int64_t group, int64_t position) const;
  /// Whether the pool has the blocks allocateSlots(seq, numNewTokens) needs
  /// in all groups, counting those their windows release.
  bool fitsInPool(const Sequence &seq, int64_t numNewTokens) const;
  /// Takes references on the longest reusable cached prefix of at most
  /// maxCachedTokens tokens; returns L.
  int64_t reuseCachedPrefix(Sequence &seq, int64_t maxCachedTokens);
  void hashFullBlocks(Sequence &seq);
  Sequence *findSequence(SeqId id);
  const Sequence *findSequence(SeqId id) const;

  int64_t blockSizeTokens;
  std::vector<KVGroupSpec> groups;
  bool enablePrefixCache;
  PrefixTree prefixTree;
  std::unique_ptr<BlockPool> blockPool;
  std::unordered_map<SeqId, Sequence> sequences;
};

} // namespace cohere2c::kv

#endif // COHERE2C_KV_CACHE_KVCACHEMANAGER_H
