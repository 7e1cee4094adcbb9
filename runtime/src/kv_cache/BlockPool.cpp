//===- BlockPool.cpp - The blocks of the KV cache -------------------------===//
#include "kv_cache/BlockPool.h"

#include <cassert>
#include <utility>

namespace cohere2c::kv {

BlockPool::BlockPool(int64_t numBlocks, int64_t numGroups,
                     EvictionCallback onEvict)
    : blocks(static_cast<size_t>(numBlocks)), usedIn(numGroups, 0),
      evictableIn(numGroups, 0), onEvict(std::move(onEvict)) {
  assert(numBlocks > 0 && numGroups > 0 &&
         "a block pool needs blocks and groups");
  freeBlocks.reserve(blocks.size());
  for (int64_t id = numBlocks - 1; id >= 0; --id)
    freeBlocks.push_back(static_cast<BlockId>(id));
}

std::optional<BlockId> BlockPool::allocate(int64_t group) {
  assert(group >= 0 && group < static_cast<int64_t>(usedIn.size()) &&
         "a group of the pool");
  BlockId block;
  if (!freeBlocks.empty()) {
    block = freeBlocks.back();
    freeBlocks.pop_back();
  } else if (!evictableBlocks.empty()) {
    block = evictableBlocks.front();
    evictableBlocks.pop_front();
    BlockState &state = blocks[block];
    --evictableIn[state.group];
    CachedKV evicted = *state.content;
    cachedBlocks.erase(evicted);
    state.content.reset();
    if (onEvict)
      onEvict(evicted);
  } else {
    return std::nullopt;
  }
  blocks[block].refCount = 1;
  blocks[block].group = group;
  ++usedIn[group];
  return block;
}

void BlockPool::ref(BlockId block) {
  BlockState &state = blocks[block];
  assert((state.refCount > 0 || state.content) &&
         "only used or evictable blocks can be referenced");
  if (state.refCount++ == 0) {
    evictableBlocks.erase(state.evictablePos);
    --evictableIn[state.group];
    ++usedIn[state.group];
  }
}

void BlockPool::release(BlockId block) {
  BlockState &state = blocks[block];
  assert(state.refCount > 0 && "releasing an unreferenced block");
  if (--state.refCount > 0)
    return;
  --usedIn[state.group];
  if (state.content) {
    state.evictablePos = evictableBlocks.insert(evictableBlocks.end(), block);
    ++evictableIn[state.group];
  } else {
    freeBlocks.push_back(block);
  }
}

bool BlockPool::cache(BlockId block, const CachedKV &content) {
  BlockState &state = blocks[block];
  assert(state.refCount > 0 && !state.content && state.group == content.group &&
         "only used, uncached blocks of the content's group can be cached");
  if (!cachedBlocks.emplace(content, block).second)
    return false;
  state.content = content;
  return true;
}

std::optional<BlockId> BlockPool::lookup(const CachedKV &content) const {
  auto it = cachedBlocks.find(content);
  if (it == cachedBlocks.end())
    return std::nullopt;
  return it->second;
}

int64_t BlockPool::refCount(BlockId block) const {
  return blocks[block].refCount;
}

bool BlockPool::isCached(BlockId block) const {
  return blocks[block].content.has_value();
}

} // namespace cohere2c::kv
