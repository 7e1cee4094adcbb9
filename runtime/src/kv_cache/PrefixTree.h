//===- PrefixTree.h - Exact identities of cached token prefixes -----------===//
//
// The prefix cache's source of truth, shared by every KV group. A node stands
// for one full block of B tokens at the end of one exact token prefix: its
// hash, its B tokens and its parent node (null for logical block 0). Nodes are
// found by hash and confirmed by comparing the tokens and the parent node's
// identity, so by induction from the root a found node's prefix equals the
// request's prefix token for token, whatever the hash function does. A hash
// held by a node with other content is a collision: that block is simply not
// cached (insert() returns null).
//
// Why a tree beside the block pool, rather than tokens and a parent hash
// per pooled block: a sliding-window group drops the blocks below its window,
// so it cannot confirm a block's ancestry by itself; the tree keeps the tokens
// of every ancestor of a cached block (B token ids per node, a few bytes next
// to a block's KV) and confirms it for all groups at once.
//
// Nodes are reference-counted: one reference per KV group whose block caches
// the node, per child node, and per sequence whose hash chain ends at it. A
// node whose count drops to zero is erased, and its parent loses a reference.
//
// Not thread-safe: one scheduler thread owns the KV cache.
//
//===----------------------------------------------------------------------===//
#ifndef COHERE2C_KV_CACHE_PREFIXTREE_H
#define COHERE2C_KV_CACHE_PREFIXTREE_H

#include "kv_cache/BlockHash.h"

#include <cstdint>
#include <memory>
#include <unordered_map>
#include <vector>

namespace cohere2c::kv {

struct PrefixNode {
  BlockHash hash;
  /// The node of the previous logical block; null for logical block 0.
  const PrefixNode *parent = nullptr;
  /// The block's token ids, B of them.
  std::vector<int32_t> tokens;
  int64_t refCount = 0;
};

class PrefixTree {
public:
  explicit PrefixTree(BlockHasher hasher = hashBlock);

  /// The node of the block tokens[0, numTokens) that follows parent's prefix
  /// (parent null: the block starts the sequence), confirmed by tokens and
  /// parent; null if there is none. Takes no reference.
  const PrefixNode *find(const PrefixNode *parent, const int32_t *tokens,
                         int64_t numTokens) const;

  /// Like find(), but creates the node when its hash is not held yet, and
  /// takes one reference on the node returned for the caller. Returns null,
  /// changing nothing, when the hash is held by a node of other content.
  const PrefixNode *insert(const PrefixNode *parent, const int32_t *tokens,
                           int64_t numTokens);

  /// The node holding hash, or null.
  const PrefixNode *lookup(const BlockHash &hash) const;

  void retain(const PrefixNode *node);
  /// Drops one reference; at zero the node is erased and its parent released.
  void release(const PrefixNode *node);

  /// Number of nodes alive.
  int64_t size() const { return static_cast<int64_t>(nodes.size()); }

private:
  BlockHash hashOf(const PrefixNode *parent, const int32_t *tokens,
                   int64_t numTokens) const;
  static bool matches(const PrefixNode &node, const PrefixNode *parent,
                      const int32_t *tokens, int64_t numTokens);
  PrefixNode &mutableNode(const PrefixNode *node);

  BlockHasher hasher;
  std::unordered_map<BlockHash, std::unique_ptr<PrefixNode>> nodes;
};

} // namespace cohere2c::kv

#endif // COHERE2C_KV_CACHE_PREFIXTREE_H
