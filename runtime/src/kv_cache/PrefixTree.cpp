//===- PrefixTree.cpp - Exact identities of cached token prefixes ---------===//
#include "kv_cache/PrefixTree.h"

#include <algorithm>
#include <cassert>
#include <utility>

namespace cohere2c::kv {

PrefixTree::PrefixTree(BlockHasher hasher) : hasher(std::move(hasher)) {}

BlockHash PrefixTree::hashOf(const PrefixNode *parent, const int32_t *tokens,
                             int64_t numTokens) const {
  return hasher(parent ? parent->hash : kRootBlockHash, tokens, numTokens);
}

bool PrefixTree::matches(const PrefixNode &node, const PrefixNode *parent,
                         const int32_t *tokens, int64_t numTokens) {
  return node.parent == parent &&
         static_cast<int64_t>(node.tokens.size()) == numTokens &&
         std::equal(node.tokens.begin(), node.tokens.end(), tokens);
}

const PrefixNode *PrefixTree::find(const PrefixNode *parent,
                                   const int32_t *tokens,
                                   int64_t numTokens) const {
  const PrefixNode *node = lookup(hashOf(parent, tokens, numTokens));
  if (!node || !matches(*node, parent, tokens, numTokens))
    return nullptr;
  return node;
}

const PrefixNode *PrefixTree::insert(const PrefixNode *parent,
                                     const int32_t *tokens, int64_t numTokens) {
  BlockHash hash = hashOf(parent, tokens, numTokens);
  std::unique_ptr<PrefixNode> &slot = nodes[hash];
  if (!slot) {
    slot = std::make_unique<PrefixNode>();
    slot->hash = hash;
    slot->parent = parent;
    slot->tokens.assign(tokens, tokens + numTokens);
    if (parent)
      retain(parent);
  } else if (!matches(*slot, parent, tokens, numTokens)) {
    return nullptr;
  }
  ++slot->refCount;
  return slot.get();
}

const PrefixNode *PrefixTree::lookup(const BlockHash &hash) const {
  auto it = nodes.find(hash);
  return it == nodes.end() ? nullptr : it->second.get();
}

PrefixNode &PrefixTree::mutableNode(const PrefixNode *node) {
  auto it = nodes.find(node->hash);
  assert(it != nodes.end() && it->second.get() == node && "not a live node");
  return *it->second;
}

void PrefixTree::retain(const PrefixNode *node) {
  ++mutableNode(node).refCount;
}

void PrefixTree::release(const PrefixNode *node) {
  // Iterative, not recursive: a chain can be thousands of blocks long.
  while (node && --mutableNode(node).refCount == 0) {
    const PrefixNode *parent = node->parent;
    nodes.erase(node->hash);
    node = parent;
  }
}

} // namespace cohere2c::kv
