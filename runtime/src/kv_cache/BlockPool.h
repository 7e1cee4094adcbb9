//===- BlockPool.h - The blocks of one KV-cache group ---------------------===//
//
// One pool per KV group (the full-attention layers, the sliding-window layers)
// owns that group's block ids 0 .. numBlocks-1 and nothing else: which device
// or host memory a block id maps to is the memory layer's business. A block
// is, at any time, exactly one of
//   - used:      referenced by at least one sequence's block table;
//   - evictable: unreferenced, but cached (it holds the KV of a full block
//                whose hash is registered) and so reusable by a later request;
//   - free:      unreferenced and not cached (never used, or its content is
//                not worth keeping).
// Free + evictable + used = numBlocks, always.
//
// allocate() hands out a free block if there is one, else evicts the least
// recently used evictable block (the one that became unreferenced first, or
// least recently hit), so cached content is only dropped when its memory is
// needed. A used block is never handed out. Names follow vLLM's (block pool,
// free block queue, block hash).
//
// Not thread-safe: one scheduler thread owns the KV cache.
//
//===----------------------------------------------------------------------===//
#ifndef COHERE2C_KV_CACHE_BLOCKPOOL_H
#define COHERE2C_KV_CACHE_BLOCKPOOL_H

#include "kv_cache/BlockHash.h"

#include <cstdint>
#include <functional>
#include <list>
#include <optional>
#include <unordered_map>
#include <vector>

namespace cohere2c::kv {

/// A block id within one group's pool; kNullBlock in a block table means "no
/// block" (released out of the sliding window, or not allocated yet).
using BlockId = int32_t;
inline constexpr BlockId kNullBlock = -1;

class BlockPool {
public:
  /// Called with the hash of a cached block when allocate() evicts it, so the
  /// owner can drop what it keeps about that content.
  using EvictionCallback = std::function<void(const BlockHash &)>;

  /// numBlocks > 0 blocks, all free. onEvict may be empty.
  explicit BlockPool(int64_t numBlocks, EvictionCallback onEvict = {});

  /// A block with reference count 1 and no hash: a free one (most recently
  /// freed first; never-used ones in increasing id order), else the least
  /// recently used evictable one, evicted (its hash is unregistered and
  /// onEvict called). std::nullopt, changing nothing, when every block is used.
  std::optional<BlockId> allocate();

  /// Takes one more reference on a used or evictable block (a prefix-cache
  /// hit); an evictable block leaves the free block queue.
  void ref(BlockId block);

  /// Drops one reference of a used block. At zero references a cached block
  /// becomes evictable as the most recently used; another becomes free.
  void release(BlockId block);

  /// Registers the hash of a used, uncached block whose KV is now full and
  /// written. Returns false, changing nothing, when another block already holds
  /// this hash (the same content computed twice): this block stays uncached.
  bool cache(BlockId block, const BlockHash &hash);

  /// The block registered under hash, used or evictable; std::nullopt if none.
  std::optional<BlockId> lookup(const BlockHash &hash) const;

  int64_t refCount(BlockId block) const;
  bool isCached(BlockId block) const;

  /// Counts in blocks.
  int64_t numBlocks() const { return static_cast<int64_t>(blocks.size()); }
  int64_t numFreeBlocks() const {
    return static_cast<int64_t>(freeBlocks.size());
  }
  int64_t numEvictableBlocks() const {
    return static_cast<int64_t>(evictableBlocks.size());
  }
  /// Blocks allocate() can hand out now: free + evictable.
  int64_t numAvailableBlocks() const {
    return numFreeBlocks() + numEvictableBlocks();
  }
  int64_t numUsedBlocks() const { return numBlocks() - numAvailableBlocks(); }

private:
  struct BlockState {
    int64_t refCount = 0;
    std::optional<BlockHash> hash;
    /// Position in evictableBlocks; meaningful only while evictable.
    std::list<BlockId>::iterator evictablePos;
  };

  std::vector<BlockState> blocks;
  /// Free blocks, handed out from the back.
  std::vector<BlockId> freeBlocks;
  /// Evictable blocks, least recently used at the front.
  std::list<BlockId> evictableBlocks;
  std::unordered_map<BlockHash, BlockId> cachedBlocks;
  EvictionCallback onEvict;
};

} // namespace cohere2c::kv

#endif // COHERE2C_KV_CACHE_BLOCKPOOL_H
