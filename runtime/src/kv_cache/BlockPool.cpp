//===- BlockPool.cpp - The blocks of one KV-cache group -------------------===//
#include "kv_cache/BlockPool.h"

#include <cassert>
#include <utility>

namespace cohere2c::kv {

BlockPool::BlockPool(int64_t numBlocks, EvictionCallback onEvict)
    : blocks(static_cast<size_t>(numBlocks)), onEvict(std::move(onEvict)) {
  assert(numBlocks > 0 && "a block pool needs blocks");
  freeBlocks.reserve(blocks.size());
  for (int64_t id = numBlocks - 1; id >= 0; --id)
    freeBlocks.push_back(static_cast<BlockId>(id));
}

std::optional<BlockId> BlockPool::allocate() {
  BlockId block;
  if (!freeBlocks.empty()) {
    block = freeBlocks.back();
    freeBlocks.pop_back();
  } else if (!evictableBlocks.empty()) {
    block = evictableBlocks.front();
    evictableBlocks.pop_front();
    BlockState &state = blocks[block];
    BlockHash evicted = *state.hash;
    cachedBlocks.erase(evicted);
    state.hash.reset();
    if (onEvict)
      onEvict(evicted);
  } else {
    return std::nullopt;
  }
  blocks[block].refCount = 1;
  return block;
}

void BlockPool::ref(BlockId block) {
  BlockState &state = blocks[block];
  assert((state.refCount > 0 || state.hash) &&
         "only used or evictable blocks can be referenced");
  if (state.refCount++ == 0)
    evictableBlocks.erase(state.evictablePos);
}

void BlockPool::release(BlockId block) {
  BlockState &state = blocks[block];
  assert(state.refCount > 0 && "releasing an unreferenced block");
  if (--state.refCount > 0)
    return;
  if (state.hash)
    state.evictablePos = evictableBlocks.insert(evictableBlocks.end(), block);
  else
    freeBlocks.push_back(block);
}

bool BlockPool::cache(BlockId block, const BlockHash &hash) {
  BlockState &state = blocks[block];
  assert(state.refCount > 0 && !state.hash &&
         "only used, uncached blocks can be cached");
  if (!cachedBlocks.emplace(hash, block).second)
    return false;
  state.hash = hash;
  return true;
}

std::optional<BlockId> BlockPool::lookup(const BlockHash &hash) const {
  auto it = cachedBlocks.find(hash);
  if (it == cachedBlocks.end())
    return std::nullopt;
  return it->second;
}

int64_t BlockPool::refCount(BlockId block) const {
  return blocks[block].refCount;
}

bool BlockPool::isCached(BlockId block) const {
  return blocks[block].hash.has_value();
}

} // namespace cohere2c::kv
