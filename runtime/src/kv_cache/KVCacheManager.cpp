//===- KVCacheManager.cpp - Host bookkeeping of the paged KV cache --------===//
#include "kv_cache/KVCacheManager.h"

#include <algorithm>
#include <cassert>
#include <limits>
#include <utility>

namespace cohere2c::kv {

namespace {

int64_t ceilDiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

std::string seqName(SeqId id) { return "sequence " + std::to_string(id); }

Status unknownSequence(SeqId id) {
  return Status::error("kv cache: unknown " + seqName(id));
}

} // namespace

StatusOr<std::unique_ptr<KVCacheManager>>
KVCacheManager::create(int64_t blockSize, int64_t numBlocks,
                       std::vector<KVGroupSpec> groups, bool enablePrefixCache,
                       BlockHasher hasher) {
  if (blockSize <= 0)
    return Status::error("kv cache: block size (" + std::to_string(blockSize) +
                         ") must be positive");
  if (numBlocks <= 0 || numBlocks > std::numeric_limits<BlockId>::max())
    return Status::error("kv cache: numBlocks (" + std::to_string(numBlocks) +
                         ") must be in [1, 2^31)");
  if (groups.empty())
    return Status::error("kv cache: needs at least one KV group");
  for (const KVGroupSpec &group : groups) {
    if (group.window < 0)
      return Status::error("kv cache: group '" + group.name + "': window (" +
                           std::to_string(group.window) +
                           ") must be 0 (full attention) or positive");
  }
  return std::unique_ptr<KVCacheManager>(
      new KVCacheManager(blockSize, numBlocks, std::move(groups),
                         enablePrefixCache, std::move(hasher)));
}

KVCacheManager::KVCacheManager(int64_t blockSize, int64_t numBlocks,
                               std::vector<KVGroupSpec> groupSpecs,
                               bool enablePrefixCache, BlockHasher hasher)
    : blockSizeTokens(blockSize), groups(std::move(groupSpecs)),
      enablePrefixCache(enablePrefixCache), prefixTree(std::move(hasher)) {
  // An evicted block no longer pins its prefix node.
  auto onEvict = [this](const CachedKV &content) {
    prefixTree.release(prefixTree.lookup(content.hash));
  };
  blockPool = std::make_unique<BlockPool>(
      numBlocks, static_cast<int64_t>(groups.size()), onEvict);
}

KVCacheManager::Sequence *KVCacheManager::findSequence(SeqId id) {
  auto it = sequences.find(id);
  return it == sequences.end() ? nullptr : &it->second;
}

const KVCacheManager::Sequence *KVCacheManager::findSequence(SeqId id) const {
  auto it = sequences.find(id);
  return it == sequences.end() ? nullptr : &it->second;
}

int64_t KVCacheManager::firstVisibleBlock(int64_t group,
                                          int64_t position) const {
  int64_t window = groups[group].window;
  if (window == 0)
    return 0;
  return std::max<int64_t>(0, position - window + 1) / blockSizeTokens;
}

StatusOr<int64_t>
KVCacheManager::addSequence(SeqId id, const std::vector<int32_t> &tokens,
                            int64_t maxCachedTokens) {
  if (sequences.count(id))
    return Status::error("kv cache: " + seqName(id) + " already exists");
  if (tokens.empty())
    return Status::error("kv cache: " + seqName(id) + " has no tokens");
  Sequence seq;
  seq.tokens = tokens;
  seq.blockTables.resize(groups.size());
  if (enablePrefixCache)
    seq.numComputed = reuseCachedPrefix(seq, maxCachedTokens);
  int64_t reused = seq.numComputed;
  sequences.emplace(id, std::move(seq));
  return reused;
}

int64_t KVCacheManager::reuseCachedPrefix(Sequence &seq,
                                          int64_t maxCachedTokens) {
  const int64_t b = blockSizeTokens;
  const int64_t n = static_cast<int64_t>(seq.tokens.size());
  // The exact prefix chain: nodes[k] is logical block k, for (k+1)B < n
  // and (k+1)B <= maxCachedTokens.
  std::vector<const PrefixNode *> nodes;
  for (int64_t k = 0; (k + 1) * b < n && (k + 1) * b <= maxCachedTokens; ++k) {
    const PrefixNode *node = prefixTree.find(
        nodes.empty() ? nullptr : nodes.back(), &seq.tokens[k * b], b);
    if (!node)
      break;
    nodes.push_back(node);
  }
  // cachedBefore[g][k]: how many of nodes[0, k) have a cached block of
  // group g.
  const int64_t numNodes = static_cast<int64_t>(nodes.size());
  std::vector<std::vector<int64_t>> cachedBefore(groups.size());
  for (size_t g = 0; g < groups.size(); ++g) {
    cachedBefore[g].assign(numNodes + 1, 0);
    for (int64_t k = 0; k < numNodes; ++k)
      cachedBefore[g][k + 1] =
          cachedBefore[g][k] +
          (blockPool->lookup({static_cast<int64_t>(g), nodes[k]->hash}) ? 1
                                                                        : 0);
  }
  // The largest m whose blocks visible from the query at L = mB are cached.
  int64_t m = numNodes;
  for (; m > 0; --m) {
    bool usable = true;
    for (size_t g = 0; g < groups.size() && usable; ++g) {
      int64_t first = firstVisibleBlock(g, m * b);
      usable = cachedBefore[g][m] - cachedBefore[g][first] == m - first;
    }
    if (usable)
      break;
  }
  if (m == 0)
    return 0;
  for (size_t g = 0; g < groups.size(); ++g) {
    std::vector<BlockId> &table = seq.blockTables[g];
    table.assign(m, kNullBlock);
    for (int64_t k = firstVisibleBlock(g, m * b); k < m; ++k) {
      table[k] = *blockPool->lookup({static_cast<int64_t>(g), nodes[k]->hash});
      blockPool->ref(table[k]);
    }
  }
  seq.numHashedBlocks = m;
  seq.hashTail = nodes[m - 1];
  prefixTree.retain(seq.hashTail);
  return m * b;
}

Status KVCacheManager::appendTokens(SeqId id,
                                    const std::vector<int32_t> &tokens) {
  Sequence *seq = findSequence(id);
  if (!seq)
    return unknownSequence(id);
  seq->tokens.insert(seq->tokens.end(), tokens.begin(), tokens.end());
  return Status::success();
}

bool KVCacheManager::fitsInPool(const Sequence &seq,
                                int64_t numNewTokens) const {
  const int64_t end = seq.numComputed + numNewTokens;
  int64_t available = blockPool->numAvailableBlocks(), needed = 0;
  for (size_t g = 0; g < groups.size(); ++g) {
    const std::vector<BlockId> &table = seq.blockTables[g];
    const int64_t tableSize = static_cast<int64_t>(table.size());
    const int64_t released = firstVisibleBlock(g, seq.numComputed);
    for (int64_t k = 0; k < std::min(released, tableSize); ++k)
      if (table[k] != kNullBlock && blockPool->refCount(table[k]) == 1)
        ++available;
    for (int64_t k = released; k < ceilDiv(end, blockSizeTokens); ++k)
      if (k >= tableSize || table[k] == kNullBlock)
        ++needed;
  }
  return needed <= available;
}

StatusOr<bool> KVCacheManager::canAllocateSlots(SeqId id,
                                                int64_t numNewTokens) const {
  const Sequence *seq = findSequence(id);
  if (!seq)
    return unknownSequence(id);
  if (numNewTokens < 0)
    return Status::error("kv cache: " + seqName(id) + ": numNewTokens (" +
                         std::to_string(numNewTokens) +
                         ") must not be negative");
  return fitsInPool(*seq, numNewTokens);
}

StatusOr<bool> KVCacheManager::allocateSlots(SeqId id, int64_t numNewTokens) {
  StatusOr<bool> fits = canAllocateSlots(id, numNewTokens);
  if (!fits.ok() || !*fits)
    return fits;
  Sequence &seq = *findSequence(id);
  const int64_t numNeeded =
      ceilDiv(seq.numComputed + numNewTokens, blockSizeTokens);
  // Every group releases first: the blocks this frees count in fitsInPool
  // and may go to another group.
  for (size_t g = 0; g < groups.size(); ++g) {
    std::vector<BlockId> &table = seq.blockTables[g];
    const int64_t released = firstVisibleBlock(g, seq.numComputed);
    for (int64_t k = 0; k < std::min<int64_t>(released, table.size()); ++k) {
      if (table[k] != kNullBlock) {
        blockPool->release(table[k]);
        table[k] = kNullBlock;
      }
    }
  }
  for (size_t g = 0; g < groups.size(); ++g) {
    std::vector<BlockId> &table = seq.blockTables[g];
    if (static_cast<int64_t>(table.size()) < numNeeded)
      table.resize(numNeeded, kNullBlock);
    for (int64_t k = firstVisibleBlock(g, seq.numComputed); k < numNeeded; ++k)
      if (table[k] == kNullBlock)
        table[k] = *blockPool->allocate(static_cast<int64_t>(g));
  }
  return true;
}

Status KVCacheManager::markComputed(SeqId id, int64_t numTokens) {
  Sequence *seq = findSequence(id);
  if (!seq)
    return unknownSequence(id);
  const int64_t end = seq->numComputed + numTokens;
  if (numTokens < 0 || end > static_cast<int64_t>(seq->tokens.size()))
    return Status::error("kv cache: " + seqName(id) + ": cannot mark " +
                         std::to_string(numTokens) + " tokens computed after " +
                         std::to_string(seq->numComputed) + " of " +
                         std::to_string(seq->tokens.size()) + " known tokens");
  for (size_t g = 0; g < groups.size(); ++g) {
    const std::vector<BlockId> &table = seq->blockTables[g];
    for (int64_t k = seq->numComputed / blockSizeTokens;
         k < ceilDiv(end, blockSizeTokens); ++k)
      if (k >= static_cast<int64_t>(table.size()) || table[k] == kNullBlock)
        return Status::error("kv cache: " + seqName(id) + ": group '" +
                             groups[g].name + "' has no block for logical " +
                             "block " + std::to_string(k) +
                             " (allocateSlots first)");
  }
  seq->numComputed = end;
  if (enablePrefixCache)
    hashFullBlocks(*seq);
  return Status::success();
}

void KVCacheManager::hashFullBlocks(Sequence &seq) {
  const int64_t b = blockSizeTokens;
  for (int64_t k = seq.numHashedBlocks;
       !seq.hashChainBroken && (k + 1) * b <= seq.numComputed; ++k) {
    const PrefixNode *node =
        prefixTree.insert(seq.hashTail, &seq.tokens[k * b], b);
    if (seq.hashTail)
      prefixTree.release(seq.hashTail);
    seq.hashTail = node;
    if (!node) {
      // A hash collision: this block and those after it stay uncached.
      seq.hashChainBroken = true;
      break;
    }
    // Blocks just computed are present in every group: releases happen only
    // in allocateSlots, for blocks before the next query's window.
    for (size_t g = 0; g < groups.size(); ++g)
      if (blockPool->cache(seq.blockTables[g][k],
                           {static_cast<int64_t>(g), node->hash}))
        prefixTree.retain(node);
    seq.numHashedBlocks = k + 1;
  }
}

Status KVCacheManager::freeSequence(SeqId id) {
  Sequence *seq = findSequence(id);
  if (!seq)
    return unknownSequence(id);
  // Logical block by block, every group's, from the last: the pool evicts
  // the least recently released first.
  size_t longest = 0;
  for (const std::vector<BlockId> &table : seq->blockTables)
    longest = std::max(longest, table.size());
  for (size_t k = longest; k-- > 0;)
    for (const std::vector<BlockId> &table : seq->blockTables)
      if (k < table.size() && table[k] != kNullBlock)
        blockPool->release(table[k]);
  if (seq->hashTail)
    prefixTree.release(seq->hashTail);
  sequences.erase(id);
  return Status::success();
}

bool KVCacheManager::hasSequence(SeqId id) const {
  return findSequence(id) != nullptr;
}

const std::vector<BlockId> &KVCacheManager::blockTable(SeqId id,
                                                       int64_t group) const {
  const Sequence *seq = findSequence(id);
  assert(seq && group >= 0 && group < numGroups());
  return seq->blockTables[group];
}

int64_t KVCacheManager::numTokens(SeqId id) const {
  const Sequence *seq = findSequence(id);
  assert(seq && "unknown sequence");
  return static_cast<int64_t>(seq->tokens.size());
}

int64_t KVCacheManager::numComputedTokens(SeqId id) const {
  const Sequence *seq = findSequence(id);
  assert(seq && "unknown sequence");
  return seq->numComputed;
}

} // namespace cohere2c::kv
