//===- KVCacheManagerTest.cpp - Tests of the paged KV cache bookkeeping ---===//
//
// Expected values are worked out by hand from the rules in KVCacheManager.h:
// the release rule (block k leaves a sliding table before computing from p
// once (k+1)B - 1 <= p - W) and the reuse rule (the largest L = mB < n whose
// blocks covering [max(0, L - W + 1), L) are cached in every group).
//
//===----------------------------------------------------------------------===//
#include "kv_cache/KVCacheManager.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <numeric>
#include <set>

using namespace cohere2c;
using namespace cohere2c::kv;

namespace {

constexpr int64_t kFull = 0;
constexpr int64_t kSliding = 1;

std::vector<int32_t> iota(int32_t first, int64_t count) {
  std::vector<int32_t> tokens(count);
  std::iota(tokens.begin(), tokens.end(), first);
  return tokens;
}

std::vector<int32_t> concat(std::vector<int32_t> a,
                            const std::vector<int32_t> &b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

std::vector<int32_t> head(const std::vector<int32_t> &tokens, int64_t n) {
  return std::vector<int32_t>(tokens.begin(), tokens.begin() + n);
}

std::unique_ptr<KVCacheManager> makeManager(int64_t blockSize,
                                            int64_t numBlocks,
                                            std::vector<KVGroupSpec> groups,
                                            BlockHasher hasher = hashBlock) {
  StatusOr<std::unique_ptr<KVCacheManager>> manager =
      KVCacheManager::create(blockSize, numBlocks, std::move(groups),
                             /*enablePrefixCache=*/true, std::move(hasher));
  EXPECT_TRUE(manager.ok()) << manager.status().message();
  return std::move(*manager);
}

int64_t add(KVCacheManager &manager, SeqId id,
            const std::vector<int32_t> &tokens) {
  StatusOr<int64_t> reused = manager.addSequence(id, tokens);
  EXPECT_TRUE(reused.ok()) << reused.status().message();
  return reused.ok() ? *reused : -1;
}

bool allocate(KVCacheManager &manager, SeqId id, int64_t numTokens) {
  StatusOr<bool> fits = manager.allocateSlots(id, numTokens);
  EXPECT_TRUE(fits.ok()) << fits.status().message();
  return fits.ok() && *fits;
}

void compute(KVCacheManager &manager, SeqId id, int64_t numTokens) {
  ASSERT_TRUE(allocate(manager, id, numTokens));
  Status status = manager.markComputed(id, numTokens);
  ASSERT_TRUE(status.ok()) << status.message();
}

// Computes every known token of id, chunk tokens per step.
void prefill(KVCacheManager &manager, SeqId id, int64_t chunk) {
  while (manager.numComputedTokens(id) < manager.numTokens(id)) {
    int64_t left = manager.numTokens(id) - manager.numComputedTokens(id);
    ASSERT_NO_FATAL_FAILURE(compute(manager, id, std::min(chunk, left)));
  }
}

// Appends each token as a decode step would, computing it at once.
void decode(KVCacheManager &manager, SeqId id,
            const std::vector<int32_t> &generated) {
  for (int32_t token : generated) {
    ASSERT_TRUE(manager.appendTokens(id, {token}).ok());
    ASSERT_NO_FATAL_FAILURE(compute(manager, id, 1));
  }
}

int64_t heldBlocks(const std::vector<BlockId> &table) {
  return std::count_if(table.begin(), table.end(),
                       [](BlockId block) { return block != kNullBlock; });
}

void expectNoLeak(const KVCacheManager &manager) {
  const BlockPool &pool = manager.pool();
  EXPECT_EQ(pool.numUsedBlocks(), 0);
  EXPECT_EQ(pool.numFreeBlocks() + pool.numEvictableBlocks(), pool.numBlocks());
  int64_t evictable = 0;
  for (int64_t g = 0; g < manager.numGroups(); ++g) {
    EXPECT_EQ(pool.numUsedBlocks(g), 0) << g;
    evictable += pool.numEvictableBlocks(g);
  }
  EXPECT_EQ(evictable, pool.numEvictableBlocks());
}

// The seed case: window 8, block size 4, request X of 40 prompt tokens and 40
// generated ones, fully computed then freed. The pool is large enough that
// nothing is evicted, so every block X computed stays cached.
struct SeedCase {
  std::unique_ptr<KVCacheManager> manager =
      makeManager(4, 128, {{"full", 0}, {"sliding", 8}});
  std::vector<int32_t> x = iota(1000, 80);
  std::vector<BlockId> xFull;    // X's 20 full-group blocks
  std::vector<BlockId> xSliding; // X's sliding blocks 0..9, after the prompt

  void run() {
    ASSERT_EQ(add(*manager, 1, head(x, 40)), 0);
    ASSERT_NO_FATAL_FAILURE(compute(*manager, 1, 40));
    xSliding = manager->blockTable(1, kSliding);
    ASSERT_NO_FATAL_FAILURE(
        decode(*manager, 1, std::vector<int32_t>(x.begin() + 40, x.end())));
    xFull = manager->blockTable(1, kFull);
    ASSERT_EQ(xFull.size(), 20u);
    ASSERT_EQ(xSliding.size(), 10u);
    ASSERT_TRUE(manager->freeSequence(1).ok());
  }
};

TEST(KVCacheManagerTest, SeedCaseReusesTwentyEightTokens) {
  SeedCase seed;
  ASSERT_NO_FATAL_FAILURE(seed.run());
  KVCacheManager &m = *seed.manager;
  // Y shares X's first 30 tokens: blocks 0..6 match, block 7 (28..31) does
  // not. L = 28 needs full blocks 0..6 and sliding blocks covering [21, 28):
  // blocks 5 and 6. All cached.
  std::vector<int32_t> y = concat(head(seed.x, 30), iota(5000, 20));
  EXPECT_EQ(add(m, 2, y), 28);
  EXPECT_EQ(m.numComputedTokens(2), 28);
  EXPECT_EQ(m.blockTable(2, kFull),
            std::vector<BlockId>(seed.xFull.begin(), seed.xFull.begin() + 7));
  EXPECT_EQ(
      m.blockTable(2, kSliding),
      (std::vector<BlockId>{kNullBlock, kNullBlock, kNullBlock, kNullBlock,
                            kNullBlock, seed.xSliding[5], seed.xSliding[6]}));
  EXPECT_EQ(m.pool().numUsedBlocks(kFull), 7);
  EXPECT_EQ(m.pool().numUsedBlocks(kSliding), 2);
  EXPECT_EQ(m.pool().numUsedBlocks(), 9);
  ASSERT_NO_FATAL_FAILURE(prefill(m, 2, 22));
  ASSERT_TRUE(m.freeSequence(2).ok());
  expectNoLeak(m);
}

// A restarted request caps the reuse at the positions it has recorded: with
// a cap of 22 tokens, L = 20 (5 blocks; sliding blocks 3 and 4 cover the
// keys [13, 20) the query at 20 sees, released by X but still cached).
TEST(KVCacheManagerTest, CapOnReusedTokensIsHonoured) {
  SeedCase seed;
  ASSERT_NO_FATAL_FAILURE(seed.run());
  KVCacheManager &m = *seed.manager;
  std::vector<int32_t> y = concat(head(seed.x, 30), iota(5000, 20));
  StatusOr<int64_t> reused = m.addSequence(2, y, /*maxCachedTokens=*/22);
  ASSERT_TRUE(reused.ok()) << reused.status().message();
  EXPECT_EQ(*reused, 20);
  EXPECT_EQ(m.blockTable(2, kSliding),
            (std::vector<BlockId>{kNullBlock, kNullBlock, kNullBlock,
                                  seed.xSliding[3], seed.xSliding[4]}));
  ASSERT_TRUE(m.freeSequence(2).ok());
  expectNoLeak(m);
}

TEST(KVCacheManagerTest, ReusesPrefixShorterThanTheWindow) {
  SeedCase seed;
  ASSERT_NO_FATAL_FAILURE(seed.run());
  KVCacheManager &m = *seed.manager;
  // 6 shared tokens: only block 0 matches; L = 4 needs sliding [0, 4).
  EXPECT_EQ(add(m, 2, concat(head(seed.x, 6), iota(5000, 10))), 4);
  EXPECT_EQ(m.blockTable(2, kFull), std::vector<BlockId>{seed.xFull[0]});
  EXPECT_EQ(m.blockTable(2, kSliding), std::vector<BlockId>{seed.xSliding[0]});
  // 3 shared tokens: no full block matches.
  EXPECT_EQ(add(m, 3, concat(head(seed.x, 3), iota(5000, 10))), 0);
  EXPECT_TRUE(m.blockTable(3, kFull).empty());
}

TEST(KVCacheManagerTest, ReusesUpToADivergenceAtABlockBoundary) {
  SeedCase seed;
  ASSERT_NO_FATAL_FAILURE(seed.run());
  KVCacheManager &m = *seed.manager;
  // Shares exactly 32 tokens, length 40: blocks 0..7 match, L = 32 < 40;
  // sliding needs [25, 32): blocks 6 and 7.
  EXPECT_EQ(add(m, 2, concat(head(seed.x, 32), iota(5000, 8))), 32);
  EXPECT_EQ(m.blockTable(2, kSliding),
            (std::vector<BlockId>{kNullBlock, kNullBlock, kNullBlock,
                                  kNullBlock, kNullBlock, kNullBlock,
                                  seed.xSliding[6], seed.xSliding[7]}));
  // Exactly X's first 32 tokens: L must stay below 32, so L = 28.
  EXPECT_EQ(add(m, 3, head(seed.x, 32)), 28);
  // The whole of X: L = 76, the largest multiple of 4 below 80.
  EXPECT_EQ(add(m, 4, seed.x), 76);
  EXPECT_EQ(m.blockTable(4, kFull),
            std::vector<BlockId>(seed.xFull.begin(), seed.xFull.begin() + 19));
}

TEST(KVCacheManagerTest, ModelWithOnlyFullLayersIgnoresWindows) {
  std::unique_ptr<KVCacheManager> m = makeManager(4, 32, {{"full", 0}});
  std::vector<int32_t> x = iota(1000, 80);
  add(*m, 1, x);
  ASSERT_NO_FATAL_FAILURE(prefill(*m, 1, 16));
  ASSERT_TRUE(m->freeSequence(1).ok());
  EXPECT_EQ(add(*m, 2, concat(head(x, 30), iota(5000, 20))), 28);
  EXPECT_EQ(add(*m, 3, concat(head(x, 61), iota(5000, 20))), 60);
}

// X (prompt of 40 in chunks of 4, then 40 decode steps) with window 8: the
// step from p = 4j holds full blocks 0..j and sliding blocks j-2..j (blocks
// k < (p - 7) / 4 released), at most 20 + 3 = 23 blocks at p = 76. A pool of
// 23 serves it, one of 22 does not.
TEST(KVCacheManagerTest, SlidingGroupNeedsOnlyTheBlocksInTheWindow) {
  std::vector<int32_t> x = iota(1000, 80);
  std::unique_ptr<KVCacheManager> small =
      makeManager(4, 22, {{"full", 0}, {"sliding", 8}});
  add(*small, 1, head(x, 76));
  ASSERT_NO_FATAL_FAILURE(prefill(*small, 1, 4));
  ASSERT_TRUE(small->appendTokens(1, {x[76]}).ok());
  EXPECT_FALSE(allocate(*small, 1, 1));

  std::unique_ptr<KVCacheManager> m =
      makeManager(4, 23, {{"full", 0}, {"sliding", 8}});
  add(*m, 1, head(x, 40));
  ASSERT_NO_FATAL_FAILURE(prefill(*m, 1, 4));
  ASSERT_NO_FATAL_FAILURE(
      decode(*m, 1, std::vector<int32_t>(x.begin() + 40, x.end())));
  EXPECT_EQ(heldBlocks(m->blockTable(1, kSliding)), 2); // blocks 18, 19
  ASSERT_TRUE(m->freeSequence(1).ok());
  // 40 allocations from 23 blocks: 17 evictions, each of the sliding block
  // released longest ago (0..16). Sliding 17..19 and full 0..19 stay cached.
  EXPECT_EQ(m->pool().numEvictableBlocks(kSliding), 3);
  EXPECT_EQ(m->pool().numEvictableBlocks(kFull), 20);

  // Sharing 30 tokens: every L <= 28 needs one of sliding blocks 0..6.
  EXPECT_EQ(add(*m, 2, concat(head(x, 30), iota(5000, 20))), 0);
  ASSERT_TRUE(m->freeSequence(2).ok());
  // Sharing 76 tokens: L = 76 needs sliding blocks 17 and 18 ([69, 76)).
  EXPECT_EQ(add(*m, 3, concat(head(x, 76), iota(5000, 4))), 76);
  const std::vector<BlockId> &sliding = m->blockTable(3, kSliding);
  ASSERT_EQ(sliding.size(), 19u);
  for (int k = 0; k < 17; ++k)
    EXPECT_EQ(sliding[k], kNullBlock) << k;
  EXPECT_NE(sliding[17], kNullBlock);
  EXPECT_NE(sliding[18], kNullBlock);
  EXPECT_EQ(heldBlocks(m->blockTable(3, kFull)), 19);
  ASSERT_TRUE(m->freeSequence(3).ok());
  expectNoLeak(*m);
}

// W = 6, B = 4 (B does not divide W) and W = 7, B = 5.
TEST(KVCacheManagerTest, SlidingReleaseRuleWithBlockSizeNotDividingWindow) {
  std::unique_ptr<KVCacheManager> m =
      makeManager(4, 32, {{"full", 0}, {"sliding", 6}});
  add(*m, 1, iota(0, 20));
  ASSERT_NO_FATAL_FAILURE(compute(*m, 1, 13));
  auto present = [&](int64_t group) {
    std::vector<bool> held;
    for (BlockId block : m->blockTable(1, group))
      held.push_back(block != kNullBlock);
    return held;
  };
  // p = 13: p - W = 7; blocks 0 (last token 3) and 1 (last 7) go.
  ASSERT_TRUE(allocate(*m, 1, 1));
  EXPECT_EQ(present(kSliding), (std::vector<bool>{false, false, true, true}));
  ASSERT_TRUE(m->markComputed(1, 1).ok());
  // p = 14, 15, 16: p - W <= 10 < 11, block 2's last token: kept.
  for (int p = 14; p <= 16; ++p) {
    ASSERT_TRUE(allocate(*m, 1, 1));
    EXPECT_TRUE(present(kSliding)[2]) << p;
    ASSERT_TRUE(m->markComputed(1, 1).ok());
  }
  // p = 17: p - W = 11; block 2 goes; block 4 holds position 16.
  ASSERT_TRUE(allocate(*m, 1, 1));
  EXPECT_EQ(present(kSliding),
            (std::vector<bool>{false, false, false, true, true}));
  EXPECT_EQ(present(kFull), (std::vector<bool>(5, true)));

  std::unique_ptr<KVCacheManager> m5 = makeManager(5, 16, {{"sliding", 7}});
  add(*m5, 1, iota(0, 25));
  ASSERT_NO_FATAL_FAILURE(compute(*m5, 1, 20));
  // p = 20: p - W = 13; blocks 0 (last 4) and 1 (last 9) go, 2 (last 14) stays.
  ASSERT_TRUE(allocate(*m5, 1, 1));
  const std::vector<BlockId> &table = m5->blockTable(1, 0);
  ASSERT_EQ(table.size(), 5u);
  EXPECT_EQ(table[0], kNullBlock);
  EXPECT_EQ(table[1], kNullBlock);
  EXPECT_NE(table[2], kNullBlock);
  ASSERT_TRUE(m5->markComputed(1, 1).ok());
  // p = 21: p - W = 14; block 2 goes.
  ASSERT_TRUE(allocate(*m5, 1, 1));
  EXPECT_EQ(table[2], kNullBlock);
  EXPECT_NE(table[3], kNullBlock);
  EXPECT_EQ(m5->pool().numUsedBlocks(), 2);
}

TEST(KVCacheManagerTest, EvictedBlockIsRecomputedNotServed) {
  std::unique_ptr<KVCacheManager> m = makeManager(4, 4, {{"full", 0}});
  std::vector<int32_t> x = iota(0, 12);
  add(*m, 1, x);
  ASSERT_NO_FATAL_FAILURE(prefill(*m, 1, 12));
  std::vector<BlockId> xFull = m->blockTable(1, kFull);
  // Freed last block first: eviction order x2, x1, x0; one never-used block.
  ASSERT_TRUE(m->freeSequence(1).ok());
  // Z takes the never-used block and evicts x2.
  add(*m, 2, iota(100, 8));
  ASSERT_NO_FATAL_FAILURE(prefill(*m, 2, 8));
  EXPECT_NE(std::find(m->blockTable(2, kFull).begin(),
                      m->blockTable(2, kFull).end(), xFull[2]),
            m->blockTable(2, kFull).end());
  ASSERT_TRUE(m->freeSequence(2).ok());

  // Y = X + 1 token: L = 12 would need x2, now gone: L = 8.
  std::vector<int32_t> y = concat(x, {77});
  EXPECT_EQ(add(*m, 3, y), 8);
  EXPECT_EQ(m->blockTable(3, kFull),
            (std::vector<BlockId>{xFull[0], xFull[1]}));
  // Recompute block 2 (and the partial block 3) from the evictable Z blocks.
  ASSERT_NO_FATAL_FAILURE(prefill(*m, 3, 8));
  ASSERT_TRUE(m->freeSequence(3).ok());
  // Block 2 is cached again.
  EXPECT_EQ(add(*m, 4, y), 12);
  ASSERT_TRUE(m->freeSequence(4).ok());
  expectNoLeak(*m);
}

// Hashes a block by its first token only, ignoring the parent.
BlockHash firstTokenHash(const BlockHash &, const int32_t *tokens, int64_t) {
  return BlockHash{static_cast<uint64_t>(tokens[0]), 0};
}

TEST(KVCacheManagerTest, ForcedHashCollisionIsNotServed) {
  std::unique_ptr<KVCacheManager> m =
      makeManager(4, 32, {{"full", 0}, {"sliding", 8}}, firstTokenHash);
  std::vector<int32_t> x = {1, 2, 3, 4, 5, 6, 7, 8, 9};
  add(*m, 1, x);
  ASSERT_NO_FATAL_FAILURE(prefill(*m, 1, 9));
  ASSERT_TRUE(m->freeSequence(1).ok());
  // Same hash as X's block 0, other tokens.
  std::vector<int32_t> y = {1, 9, 9, 9, 5, 6, 7, 8, 9};
  EXPECT_EQ(add(*m, 2, y), 0);
  // Y computes; its colliding blocks stay uncached and X's stay served.
  ASSERT_NO_FATAL_FAILURE(prefill(*m, 2, 9));
  ASSERT_TRUE(m->freeSequence(2).ok());
  EXPECT_EQ(add(*m, 3, y), 0);
  // Same tokens and hash as X's block 1, but at the start of a sequence.
  EXPECT_EQ(add(*m, 4, {5, 6, 7, 8, 9}), 0);
  // X's own prefix is still served.
  EXPECT_EQ(add(*m, 5, x), 8);
  for (SeqId id : {3, 4, 5})
    ASSERT_TRUE(m->freeSequence(id).ok());
  expectNoLeak(*m);
}

TEST(KVCacheManagerTest, LiveBlocksAreNeverHandedOutUnderPressure) {
  std::unique_ptr<KVCacheManager> m = makeManager(4, 6, {{"full", 0}});
  std::vector<int32_t> x = iota(0, 12);
  add(*m, 1, x);
  ASSERT_NO_FATAL_FAILURE(prefill(*m, 1, 12));
  ASSERT_TRUE(m->freeSequence(1).ok());
  // A reuses x0, x1 and takes one never-used block: 2 free, x2 evictable.
  EXPECT_EQ(add(*m, 2, concat(head(x, 8), iota(100, 4))), 8);
  ASSERT_NO_FATAL_FAILURE(prefill(*m, 2, 4));
  std::vector<BlockId> a = m->blockTable(2, kFull);
  // B: 16 tokens need 4 blocks, 3 available.
  add(*m, 3, iota(200, 16));
  EXPECT_FALSE(allocate(*m, 3, 16));
  EXPECT_TRUE(allocate(*m, 3, 12));
  EXPECT_FALSE(allocate(*m, 3, 13));
  std::set<BlockId> held(a.begin(), a.end());
  for (BlockId block : m->blockTable(3, kFull))
    EXPECT_TRUE(held.insert(block).second) << "block " << block << " shared";
  EXPECT_EQ(m->blockTable(2, kFull), a);
  EXPECT_EQ(m->pool().numAvailableBlocks(), 0);
}

TEST(KVCacheManagerTest, AllocateSlotsFailsWithoutChangingState) {
  std::unique_ptr<KVCacheManager> m =
      makeManager(4, 8, {{"full", 0}, {"sliding", 4}});
  add(*m, 1, iota(0, 24));
  ASSERT_NO_FATAL_FAILURE(compute(*m, 1, 12));
  std::vector<BlockId> full = m->blockTable(1, kFull);
  std::vector<BlockId> sliding = m->blockTable(1, kSliding);
  // 6 of 8 blocks used. From p = 12: releasing sliding blocks 0 and 1
  // ((k+1)*4 - 1 <= 8) makes 4 available; 12 more tokens need blocks 3, 4, 5
  // in both groups: 6, two too many.
  EXPECT_FALSE(*m->canAllocateSlots(1, 12));
  EXPECT_FALSE(allocate(*m, 1, 12));
  EXPECT_EQ(m->blockTable(1, kFull), full);
  EXPECT_EQ(m->blockTable(1, kSliding), sliding);
  EXPECT_EQ(m->pool().numUsedBlocks(kFull), 3);
  EXPECT_EQ(m->pool().numUsedBlocks(kSliding), 3);
  EXPECT_EQ(m->numComputedTokens(1), 12);
  // 8 tokens need blocks 3 and 4 in both groups: exactly what is available.
  EXPECT_TRUE(*m->canAllocateSlots(1, 8));
  ASSERT_TRUE(allocate(*m, 1, 8));
  const std::vector<BlockId> &after = m->blockTable(1, kSliding);
  ASSERT_EQ(after.size(), 5u);
  EXPECT_EQ(after[0], kNullBlock);
  EXPECT_EQ(after[1], kNullBlock);
  EXPECT_EQ(after[2], sliding[2]);
  EXPECT_EQ(m->pool().numUsedBlocks(kSliding), 3);
  EXPECT_EQ(m->pool().numUsedBlocks(kFull), 5);
  EXPECT_EQ(m->pool().numAvailableBlocks(), 0);
}

TEST(KVCacheManagerTest, NoBlockLeaksOnceEverySequenceIsFreed) {
  std::unique_ptr<KVCacheManager> m =
      makeManager(4, 34, {{"full", 0}, {"sliding", 8}});
  std::vector<int32_t> base = concat(iota(0, 40), iota(0, 40));
  for (SeqId id = 1; id <= 6; ++id) {
    // 10 * id tokens shared with the others, then 7 of its own.
    add(*m, id, concat(head(base, 10 * id), iota(1000 * id, 7)));
    // Computes 5 tokens a step until done or out of blocks: the pool must
    // stay consistent either way.
    while (m->numComputedTokens(id) < m->numTokens(id)) {
      int64_t n =
          std::min<int64_t>(5, m->numTokens(id) - m->numComputedTokens(id));
      if (!allocate(*m, id, n))
        break;
      ASSERT_TRUE(m->markComputed(id, n).ok());
    }
    if (id % 2 == 0) {
      ASSERT_TRUE(m->freeSequence(id - 1).ok());
    }
  }
  for (SeqId id : {2, 4, 6})
    ASSERT_TRUE(m->freeSequence(id).ok());
  expectNoLeak(*m);
  EXPECT_GT(m->pool().numEvictableBlocks(kFull), 0);
}

TEST(KVCacheManagerTest, RejectsMisuseWithoutChangingState) {
  EXPECT_FALSE(KVCacheManager::create(0, 4, {{"full", 0}}, true).ok());
  EXPECT_FALSE(KVCacheManager::create(4, 4, {}, true).ok());
  EXPECT_FALSE(KVCacheManager::create(4, 4, {{"sliding", -1}}, true).ok());
  EXPECT_FALSE(KVCacheManager::create(4, 0, {{"full", 0}}, true).ok());
  std::unique_ptr<KVCacheManager> m = makeManager(4, 4, {{"full", 0}});
  EXPECT_FALSE(m->addSequence(1, {}).ok());
  add(*m, 1, iota(0, 6));
  EXPECT_FALSE(m->addSequence(1, iota(0, 6)).ok());
  EXPECT_FALSE(m->allocateSlots(2, 1).ok());
  EXPECT_FALSE(m->allocateSlots(1, -1).ok());
  // No blocks yet, and no 7th token.
  EXPECT_FALSE(m->markComputed(1, 1).ok());
  ASSERT_TRUE(allocate(*m, 1, 7));
  EXPECT_FALSE(m->markComputed(1, 7).ok());
  EXPECT_EQ(m->numComputedTokens(1), 0);
  EXPECT_FALSE(m->freeSequence(2).ok());
}

TEST(KVCacheManagerTest, PrefixCacheOffServesNothing) {
  StatusOr<std::unique_ptr<KVCacheManager>> made =
      KVCacheManager::create(4, 8, {{"full", 0}}, /*enablePrefixCache=*/false);
  ASSERT_TRUE(made.ok());
  KVCacheManager &m = **made;
  add(m, 1, iota(0, 12));
  ASSERT_NO_FATAL_FAILURE(prefill(m, 1, 12));
  ASSERT_TRUE(m.freeSequence(1).ok());
  EXPECT_EQ(m.pool().numFreeBlocks(), 8);
  EXPECT_EQ(add(m, 2, iota(0, 12)), 0);
}

// Command R7B: 8 full + 24 sliding layers, window 4096, 4096 bytes of K and V
// per token and layer (8 KV heads x 128 x 2 (K, V) x 2 bytes), in four groups
// of 8 layers (Manifest.h). With B = 16, a 32768-token sequence holds at most
// 8 * 32768 + 24 * (4096 + 2 * 16) token-layers of blocks, at every step of
// its prefill and decode.
TEST(KVCacheManagerTest, MemoryBoundForCommandR7B) {
  constexpr int64_t kBlock = 16, kTokens = 32768, kWindow = 4096;
  constexpr int64_t kBytesPerBlock = kBlock * 8 * (8 * 128 * 2 * 2);
  const int64_t bound =
      (8 * kTokens + 24 * (kWindow + 2 * kBlock)) * (8 * 128 * 2 * 2);
  // A pool far larger than the bound, so only the release rule keeps it.
  std::unique_ptr<KVCacheManager> m =
      makeManager(kBlock, kTokens / kBlock + 3 * 1024,
                  {{"full", 0},
                   {"sliding4096.0", kWindow},
                   {"sliding4096.1", kWindow},
                   {"sliding4096.2", kWindow}});
  std::vector<int32_t> tokens = iota(0, kTokens);
  const int64_t promptLen = kTokens - 256;
  add(*m, 1, head(tokens, promptLen));
  int64_t maxBytes = 0;
  auto step = [&](int64_t n) {
    ASSERT_NO_FATAL_FAILURE(compute(*m, 1, n));
    int64_t held = 0;
    for (int64_t g = 0; g < m->numGroups(); ++g) {
      ASSERT_EQ(m->pool().numUsedBlocks(g), heldBlocks(m->blockTable(1, g)));
      held += heldBlocks(m->blockTable(1, g));
    }
    ASSERT_EQ(m->pool().numUsedBlocks(), held);
    maxBytes = std::max(maxBytes, held * kBytesPerBlock);
  };
  while (m->numComputedTokens(1) < promptLen)
    ASSERT_NO_FATAL_FAILURE(step(kBlock));
  for (int64_t p = promptLen; p < kTokens; ++p) {
    ASSERT_TRUE(m->appendTokens(1, {tokens[p]}).ok());
    ASSERT_NO_FATAL_FAILURE(step(1));
  }
  EXPECT_LE(maxBytes, bound);
  RecordProperty("max_kv_bytes", std::to_string(maxBytes));
  RecordProperty("bound_kv_bytes", std::to_string(bound));
  EXPECT_EQ(heldBlocks(m->blockTable(1, kFull)), kTokens / kBlock);
  for (int64_t g = 1; g < m->numGroups(); ++g)
    EXPECT_LE(heldBlocks(m->blockTable(1, g)) * kBlock, kWindow + 2 * kBlock);
}

} // namespace
