//===- BlockPoolTest.cpp - Tests of one KV group's block pool -------------===//
#include "kv_cache/BlockPool.h"

#include <gtest/gtest.h>

#include <set>
#include <vector>

using namespace cohere2c::kv;

namespace {

BlockHash hashOf(uint64_t n) { return BlockHash{n, ~n}; }

TEST(BlockPoolTest, HandsOutEveryBlockOnceThenFails) {
  BlockPool pool(4);
  std::set<BlockId> seen;
  for (int i = 0; i < 4; ++i) {
    std::optional<BlockId> block = pool.allocate();
    ASSERT_TRUE(block);
    EXPECT_GE(*block, 0);
    EXPECT_LT(*block, 4);
    EXPECT_EQ(pool.refCount(*block), 1);
    seen.insert(*block);
  }
  EXPECT_EQ(seen.size(), 4u);
  EXPECT_EQ(pool.numUsedBlocks(), 4);
  EXPECT_EQ(pool.numAvailableBlocks(), 0);
  EXPECT_FALSE(pool.allocate());
  EXPECT_EQ(pool.numUsedBlocks(), 4);
}

TEST(BlockPoolTest, ReferenceCountsKeepABlockUntilTheLastRelease) {
  BlockPool pool(2);
  BlockId block = *pool.allocate();
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
  BlockPool pool(2);
  BlockId block = *pool.allocate();
  ASSERT_TRUE(pool.cache(block, hashOf(7)));
  EXPECT_TRUE(pool.isCached(block));
  pool.release(block);
  EXPECT_EQ(pool.numEvictableBlocks(), 1);
  EXPECT_EQ(pool.numFreeBlocks(), 1);
  EXPECT_EQ(pool.lookup(hashOf(7)), block);
  EXPECT_FALSE(pool.lookup(hashOf(8)));
}

TEST(BlockPoolTest, EvictsLeastRecentlyUsedFirst) {
  std::vector<BlockHash> evicted;
  BlockPool pool(3, [&](const BlockHash &hash) { evicted.push_back(hash); });
  BlockId a = *pool.allocate(), b = *pool.allocate(), c = *pool.allocate();
  ASSERT_TRUE(pool.cache(a, hashOf(1)));
  ASSERT_TRUE(pool.cache(b, hashOf(2)));
  ASSERT_TRUE(pool.cache(c, hashOf(3)));
  // Unreferenced in the order b, a, c: that is the eviction order.
  pool.release(b);
  pool.release(a);
  pool.release(c);
  EXPECT_EQ(pool.allocate(), b);
  EXPECT_EQ(pool.allocate(), a);
  EXPECT_EQ(pool.allocate(), c);
  ASSERT_EQ(evicted.size(), 3u);
  EXPECT_EQ(evicted[0], hashOf(2));
  EXPECT_EQ(evicted[1], hashOf(1));
  EXPECT_EQ(evicted[2], hashOf(3));
}

TEST(BlockPoolTest, HitMovesBlockToMostRecentlyUsed) {
  BlockPool pool(2);
  BlockId a = *pool.allocate(), b = *pool.allocate();
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
  EXPECT_EQ(pool.allocate(), b);
  EXPECT_EQ(pool.allocate(), a);
}

TEST(BlockPoolTest, PrefersFreeBlocksToEvictingCachedOnes) {
  BlockPool pool(2);
  BlockId cached = *pool.allocate(), plain = *pool.allocate();
  ASSERT_TRUE(pool.cache(cached, hashOf(1)));
  pool.release(cached);
  pool.release(plain);
  EXPECT_EQ(pool.allocate(), plain);
  EXPECT_EQ(pool.lookup(hashOf(1)), cached);
  EXPECT_EQ(pool.allocate(), cached);
  EXPECT_FALSE(pool.lookup(hashOf(1)));
}

TEST(BlockPoolTest, EvictedBlockIsNoLongerFoundOrCached) {
  BlockPool pool(1);
  BlockId block = *pool.allocate();
  ASSERT_TRUE(pool.cache(block, hashOf(5)));
  pool.release(block);
  BlockId again = *pool.allocate();
  EXPECT_EQ(again, block);
  EXPECT_FALSE(pool.isCached(again));
  EXPECT_FALSE(pool.lookup(hashOf(5)));
  // Released now, it is free, not evictable.
  pool.release(again);
  EXPECT_EQ(pool.numFreeBlocks(), 1);
  EXPECT_EQ(pool.numEvictableBlocks(), 0);
}

TEST(BlockPoolTest, ReferencedBlocksAreNeverEvicted) {
  BlockPool pool(3);
  BlockId held = *pool.allocate();
  ASSERT_TRUE(pool.cache(held, hashOf(1)));
  BlockId other = *pool.allocate();
  ASSERT_TRUE(pool.cache(other, hashOf(2)));
  pool.release(other);
  // One free and one evictable block; the cached, referenced one stays.
  std::optional<BlockId> first = pool.allocate(), second = pool.allocate();
  ASSERT_TRUE(first && second);
  EXPECT_NE(*first, held);
  EXPECT_NE(*second, held);
  EXPECT_FALSE(pool.allocate());
  EXPECT_EQ(pool.lookup(hashOf(1)), held);
  EXPECT_EQ(pool.refCount(held), 1);
}

TEST(BlockPoolTest, SecondBlockWithTheSameHashStaysUncached) {
  BlockPool pool(2);
  BlockId a = *pool.allocate(), b = *pool.allocate();
  ASSERT_TRUE(pool.cache(a, hashOf(1)));
  EXPECT_FALSE(pool.cache(b, hashOf(1)));
  EXPECT_FALSE(pool.isCached(b));
  EXPECT_EQ(pool.lookup(hashOf(1)), a);
  pool.release(b);
  EXPECT_EQ(pool.numFreeBlocks(), 1);
}

TEST(BlockPoolTest, AllBlocksFreeOrEvictableOnceReleased) {
  BlockPool pool(5);
  std::vector<BlockId> blocks;
  for (int i = 0; i < 5; ++i)
    blocks.push_back(*pool.allocate());
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

} // namespace
