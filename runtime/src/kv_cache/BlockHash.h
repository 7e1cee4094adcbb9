//===- BlockHash.h - Chained 128-bit hashes of full KV-cache blocks -------===//
//
// A full block of B tokens is identified, for prefix caching, by the hash of
// (its parent block's hash, its B token ids): equal hashes mean equal prefixes
// up to the block's end, except on a collision. The prefix tree confirms every
// hit by comparing tokens and the parent link, so a collision only costs a
// cache miss, never someone else's KV (docs/ARCHITECTURE.md, "The paged KV
// cache").
//
// Hashes are XXH3-128 of the parent's 16 bytes followed by the tokens' bytes in
// host order: they identify blocks within one process and are never persisted.
//
//===----------------------------------------------------------------------===//
#ifndef COHERE2C_KV_CACHE_BLOCKHASH_H
#define COHERE2C_KV_CACHE_BLOCKHASH_H

#include <cstddef>
#include <cstdint>
#include <functional>

namespace cohere2c::kv {

struct BlockHash {
  uint64_t low = 0;
  uint64_t high = 0;

  bool operator==(const BlockHash &other) const {
    return low == other.low && high == other.high;
  }
  bool operator!=(const BlockHash &other) const { return !(*this == other); }
};

/// The parent hash of logical block 0 (the empty prefix).
inline constexpr BlockHash kRootBlockHash{};

/// Computes the hash of a block from its parent's hash and its numTokens token
/// ids. A parameter of the prefix tree so that tests can force collisions.
using BlockHasher = std::function<BlockHash(
    const BlockHash &parent, const int32_t *tokens, int64_t numTokens)>;

/// XXH3-128 of (parent, tokens[0, numTokens)). Pure; thread-safe.
BlockHash hashBlock(const BlockHash &parent, const int32_t *tokens,
                    int64_t numTokens);

} // namespace cohere2c::kv

template <> struct std::hash<cohere2c::kv::BlockHash> {
  size_t operator()(const cohere2c::kv::BlockHash &hash) const {
    return static_cast<size_t>(hash.low ^ (hash.high * 0x9e3779b97f4a7c15ULL));
  }
};

#endif // COHERE2C_KV_CACHE_BLOCKHASH_H
