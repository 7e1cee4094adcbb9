//===- BlockPoolTest.cpp - Tests of the KV cache's block pool -------------===//
#include "kv_cache/BlockPool.h"

#include <gtest/gtest.h>

#include <set>
#include <vector>

using namespace cohere2c::kv;

namespace {

CachedKV hashOf(uint64_t n, int64_t group = 0) {
  return CachedKV{group, BlockHash{n, ~n}};
}

TEST(BlockPoolTest, HandsOutEveryBlockOnceThenFails) {
  BlockPool pool(4, 1);
  std::set<BlockId> seen;
  for (int i = 0; i < 4; ++i) {
    std::optional<BlockId> block = pool.allocate(0);
    ASSERT_TRUE(block);
    EXPECT_GE(*block, 0);
    EXPECT_LT(*block, 4);
    EXPECT_EQ(pool.refCount(*block), 1);
    seen.insert(*block);
  }
  EXPECT_EQ(seen.size(), 4u);
  EXPECT_EQ(pool.numUsedBlocks(), 4);
  EXPECT_EQ(pool.numAvailableBlocks(), 0);
  EXPECT_FALSE(pool.allocate(0));
  EXPECT_EQ(pool.numUsedBlocks(), 4);
}

TEST(BlockPoolTest, ReferenceCountsKeepABlockUntilTheLastRelease) {
  BlockPool pool(2, 1);
  BlockId block = *pool.allocate(0);
  pool.ref(block);
  EXPECT_EQ(pool.refCount(block), 2);
  pool.release(block);
  EXPECT_EQ(pool.refCount(block), 1);
  EXPECT_EQ(pool.numUsedBlocks(), 1);
  pool.release(block);
  EXPECT_EQ(pool.refCount(block), 0);
  // Uncached: back to free, not evictable.
  EXPECT_EQ(pool.numFreeBlocks(), 2);
  EXPECT_EQ(pool.numEvictableBlocks(), 0);
}

TEST(BlockPoolTest, CachedBlockStaysFindableAfterRelease) {
  BlockPool pool(2, 1);
  BlockId block = *pool.allocate(0);
  ASSERT_TRUE(pool.cache(block, hashOf(7)));
  EXPECT_TRUE(pool.isCached(block));
  pool.release(block);
  EXPECT_EQ(pool.numEvictableBlocks(), 1);
  EXPECT_EQ(pool.numFreeBlocks(), 1);
  EXPECT_EQ(pool.lookup(hashOf(7)), block);
  EXPECT_FALSE(pool.lookup(hashOf(8)));
}

TEST(BlockPoolTest, EvictsLeastRecentlyUsedFirst) {
  std::vector<CachedKV> evicted;
  BlockPool pool(3, 1,
                 [&](const CachedKV &content) { evicted.push_back(content); });
  BlockId a = *pool.allocate(0), b = *pool.allocate(0), c = *pool.allocate(0);
  ASSERT_TRUE(pool.cache(a, hashOf(1)));
  ASSERT_TRUE(pool.cache(b, hashOf(2)));
  ASSERT_TRUE(pool.cache(c, hashOf(3)));
  // Unreferenced in the order b, a, c: that is the eviction order.
  pool.release(b);
  pool.release(a);
  pool.release(c);
  EXPECT_EQ(pool.allocate(0), b);
  EXPECT_EQ(pool.allocate(0), a);
  EXPECT_EQ(pool.allocate(0), c);
  ASSERT_EQ(evicted.size(), 3u);
  EXPECT_EQ(evicted[0], hashOf(2));
  EXPECT_EQ(evicted[1], hashOf(1));
  EXPECT_EQ(evicted[2], hashOf(3));
}

TEST(BlockPoolTest, HitMovesBlockToMostRecentlyUsed) {
  BlockPool pool(2, 1);
  BlockId a = *pool.allocate(0), b = *pool.allocate(0);
  ASSERT_TRUE(pool.cache(a, hashOf(1)));
  ASSERT_TRUE(pool.cache(b, hashOf(2)));
  pool.release(a);
  pool.release(b);
  // A hit on a, the least recently used, takes it out of the queue.
  pool.ref(a);
  EXPECT_EQ(pool.numEvictableBlocks(), 1);
  EXPECT_EQ(pool.numUsedBlocks(), 1);
  pool.release(a);
  // Now b is the least recently used.
  EXPECT_EQ(pool.allocate(0), b);
  EXPECT_EQ(pool.allocate(0), a);
}

TEST(BlockPoolTest, PrefersFreeBlocksToEvictingCachedOnes) {
  BlockPool pool(2, 1);
  BlockId cached = *pool.allocate(0), plain = *pool.allocate(0);
  ASSERT_TRUE(pool.cache(cached, hashOf(1)));
  pool.release(cached);
  pool.release(plain);
  EXPECT_EQ(pool.allocate(0), plain);
  EXPECT_EQ(pool.lookup(hashOf(1)), cached);
  EXPECT_EQ(pool.allocate(0), cached);
  EXPECT_FALSE(pool.lookup(hashOf(1)));
}

TEST(BlockPoolTest, EvictedBlockIsNoLongerFoundOrCached) {
  BlockPool pool(1, 1);
  BlockId block = *pool.allocate(0);
  ASSERT_TRUE(pool.cache(block, hashOf(5)));
  pool.release(block);
  BlockId again = *pool.allocate(0);
  EXPECT_EQ(again, block);
  EXPECT_FALSE(pool.isCached(again));
  EXPECT_FALSE(pool.lookup(hashOf(5)));
  // Released now, it is free, not evictable.
  pool.release(again);
  EXPECT_EQ(pool.numFreeBlocks(), 1);
  EXPECT_EQ(pool.numEvictableBlocks(), 0);
}

TEST(BlockPoolTest, ReferencedBlocksAreNeverEvicted) {
  BlockPool pool(3, 1);
  BlockId held = *pool.allocate(0);
  ASSERT_TRUE(pool.cache(held, hashOf(1)));
  BlockId other = *pool.allocate(0);
  ASSERT_TRUE(pool.cache(other, hashOf(2)));
  pool.release(other);
  // One free and one evictable block; the cached, referenced one stays.
  std::optional<BlockId> first = pool.allocate(0), second = pool.allocate(0);
  ASSERT_TRUE(first && second);
  EXPECT_NE(*first, held);
  EXPECT_NE(*second, held);
  EXPECT_FALSE(pool.allocate(0));
  EXPECT_EQ(pool.lookup(hashOf(1)), held);
  EXPECT_EQ(pool.refCount(held), 1);
}

TEST(BlockPoolTest, SecondBlockWithTheSameHashStaysUncached) {
  BlockPool pool(2, 1);
  BlockId a = *pool.allocate(0), b = *pool.allocate(0);
  ASSERT_TRUE(pool.cache(a, hashOf(1)));
  EXPECT_FALSE(pool.cache(b, hashOf(1)));
  EXPECT_FALSE(pool.isCached(b));
  EXPECT_EQ(pool.lookup(hashOf(1)), a);
  pool.release(b);
  EXPECT_EQ(pool.numFreeBlocks(), 1);
}

TEST(BlockPoolTest, AllBlocksFreeOrEvictableOnceReleased) {
  BlockPool pool(5, 1);
  std::vector<BlockId> blocks;
  for (int i = 0; i < 5; ++i)
    blocks.push_back(*pool.allocate(0));
  for (int i = 0; i < 3; ++i)
    ASSERT_TRUE(pool.cache(blocks[i], hashOf(i)));
  pool.ref(blocks[0]);
  for (BlockId block : blocks)
    pool.release(block);
  pool.release(blocks[0]);
  EXPECT_EQ(pool.numFreeBlocks(), 2);
  EXPECT_EQ(pool.numEvictableBlocks(), 3);
  EXPECT_EQ(pool.numUsedBlocks(), 0);
}

TEST(BlockPoolTest, ABlockOneGroupReleasesServesAnother) {
  BlockPool pool(2, 2);
  BlockId sliding = *pool.allocate(1);
  BlockId full = *pool.allocate(0);
  EXPECT_FALSE(pool.allocate(0));
  EXPECT_EQ(pool.numUsedBlocks(0), 1);
  EXPECT_EQ(pool.numUsedBlocks(1), 1);
  pool.release(sliding);
  EXPECT_EQ(pool.allocate(0), sliding);
  EXPECT_EQ(pool.numUsedBlocks(0), 2);
  EXPECT_EQ(pool.numUsedBlocks(1), 0);
  pool.release(full);
  EXPECT_EQ(pool.numUsedBlocks(0), 1);
}

TEST(BlockPoolTest, TheSameHashInTwoGroupsIsTwoContents) {
  std::vector<CachedKV> evicted;
  BlockPool pool(3, 2,
                 [&](const CachedKV &content) { evicted.push_back(content); });
  BlockId inFull = *pool.allocate(0), inSliding = *pool.allocate(1);
  ASSERT_TRUE(pool.cache(inFull, hashOf(4, 0)));
  ASSERT_TRUE(pool.cache(inSliding, hashOf(4, 1)));
  EXPECT_EQ(pool.lookup(hashOf(4, 0)), inFull);
  EXPECT_EQ(pool.lookup(hashOf(4, 1)), inSliding);
  pool.release(inSliding);
  EXPECT_EQ(pool.numEvictableBlocks(1), 1);
  EXPECT_EQ(pool.numEvictableBlocks(0), 0);
  // The free block first, then the sliding group's cached one, for group 0.
  BlockId free = *pool.allocate(0);
  EXPECT_NE(free, inSliding);
  EXPECT_EQ(pool.allocate(0), inSliding);
  ASSERT_EQ(evicted.size(), 1u);
  EXPECT_EQ(evicted[0], hashOf(4, 1));
  EXPECT_EQ(pool.numEvictableBlocks(1), 0);
  EXPECT_EQ(pool.numUsedBlocks(0), 3);
  EXPECT_FALSE(pool.lookup(hashOf(4, 1)));
  EXPECT_EQ(pool.lookup(hashOf(4, 0)), inFull);
}

} // namespace
