//===- BlockPool.h - The blocks of the KV cache ---------------------------===//
//
// One pool owns the block ids 0 .. numBlocks-1 that every KV group draws from
// (its groups hold the same number of layers, so a block has the same size in
// each: Manifest.h, KVGroup) and nothing else: which device or host memory a
// block id maps to is the memory layer's business. A block is, at any time,
// exactly one of
//   - used:      referenced by at least one sequence's block table;
//   - evictable: unreferenced, but cached (it holds the KV of a full block
//                of one group, registered under (group, hash)) and so
//                reusable by a later request;
//   - free:      unreferenced and not cached (never used, or its content is
//                not worth keeping).
// Free + evictable + used = numBlocks, always. A used or evictable block
// belongs to the group it was allocated for until it is free again.
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

/// A block id within the pool; kNullBlock in a block table means "no
/// block" (released out of the sliding window, or not allocated yet).
using BlockId = int32_t;
inline constexpr BlockId kNullBlock = -1;

/// What a cached block holds: the K and V of the full block of prefix hash
/// `hash` for the layers of KV group `group`.
struct CachedKV {
  int64_t group = 0;
  BlockHash hash;

  bool operator==(const CachedKV &other) const {
    return group == other.group && hash == other.hash;
  }
};

} // namespace cohere2c::kv

template <> struct std::hash<cohere2c::kv::CachedKV> {
  size_t operator()(const cohere2c::kv::CachedKV &content) const {
    return std::hash<cohere2c::kv::BlockHash>()(content.hash) ^
           static_cast<size_t>(content.group * 0x9e3779b97f4a7c15ULL);
  }
};

namespace cohere2c::kv {

class BlockPool {
public:
  /// Called with what a cached block held when allocate() evicts it, so the
  /// owner can drop what it keeps about that content.
  using EvictionCallback = std::function<void(const CachedKV &)>;

  /// numBlocks > 0 blocks, all free, for numGroups > 0 KV groups. onEvict
  /// may be empty.
  BlockPool(int64_t numBlocks, int64_t numGroups,
            EvictionCallback onEvict = {});

  /// A block of `group` with reference count 1 and no content: a free one
  /// (most recently freed first; never-used ones in increasing id order),
  /// else the least recently used evictable one of any group, evicted (its
  /// content is unregistered and onEvict called). std::nullopt, changing
  /// nothing, when every block is used.
  std::optional<BlockId> allocate(int64_t group);

  /// Takes one more reference on a used or evictable block (a prefix-cache
  /// hit); an evictable block leaves the free block queue.
  void ref(BlockId block);

  /// Drops one reference of a used block. At zero references a cached block
  /// becomes evictable as the most recently used; another becomes free.
  void release(BlockId block);

  /// Registers what a used, uncached block of content.group whose KV is now
  /// full and written holds. Returns false, changing nothing, when another
  /// block already holds it (the same content computed twice): this block stays
  /// uncached.
  bool cache(BlockId block, const CachedKV &content);

  /// The block registered as holding `content`, used or evictable;
  /// std::nullopt if none.
  std::optional<BlockId> lookup(const CachedKV &content) const;

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
  /// Used and evictable blocks of one group.
  int64_t numUsedBlocks(int64_t group) const { return usedIn[group]; }
  int64_t numEvictableBlocks(int64_t group) const { return evictableIn[group]; }

private:
  struct BlockState {
    int64_t refCount = 0;
    int64_t group = 0; // meaningful while used or evictable
    std::optional<CachedKV> content;
    /// Position in evictableBlocks; meaningful only while evictable.
    std::list<BlockId>::iterator evictablePos;
  };

  std::vector<BlockState> blocks;
  /// Free blocks, handed out from the back.
  std::vector<BlockId> freeBlocks;
  /// Evictable blocks, least recently used at the front.
  std::list<BlockId> evictableBlocks;
  std::unordered_map<CachedKV, BlockId> cachedBlocks;
  std::vector<int64_t> usedIn, evictableIn;
  EvictionCallback onEvict;
};

} // namespace cohere2c::kv

#endif // COHERE2C_KV_CACHE_BLOCKPOOL_H
