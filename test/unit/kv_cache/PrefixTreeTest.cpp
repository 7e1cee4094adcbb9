//===- PrefixTreeTest.cpp - Tests of the exact prefix identities ----------===//
#include "kv_cache/PrefixTree.h"

#include <gtest/gtest.h>

#include <vector>

using namespace cohere2c::kv;

namespace {

// Hashes a block by its first token only, ignoring the parent: any two blocks
// starting with the same token collide.
BlockHash firstTokenHash(const BlockHash &, const int32_t *tokens, int64_t) {
  return BlockHash{static_cast<uint64_t>(tokens[0]), 0};
}

TEST(PrefixTreeTest, FindsAnInsertedChain) {
  PrefixTree tree;
  std::vector<int32_t> a = {1, 2, 3, 4}, b = {5, 6, 7, 8};
  const PrefixNode *na = tree.insert(nullptr, a.data(), 4);
  const PrefixNode *nb = tree.insert(na, b.data(), 4);
  ASSERT_TRUE(na && nb);
  EXPECT_EQ(tree.find(nullptr, a.data(), 4), na);
  EXPECT_EQ(tree.find(na, b.data(), 4), nb);
  EXPECT_EQ(nb->parent, na);
  // Same tokens after another prefix: a different block.
  EXPECT_EQ(tree.find(nullptr, b.data(), 4), nullptr);
  // Inserting existing content returns the same node, one more reference.
  EXPECT_EQ(tree.insert(nullptr, a.data(), 4), na);
  EXPECT_EQ(na->refCount, 3); // two inserts + child nb
}

TEST(PrefixTreeTest, CollidingBlockIsNeitherFoundNorInserted) {
  PrefixTree tree(firstTokenHash);
  std::vector<int32_t> a = {1, 2, 3, 4}, collides = {1, 9, 9, 9};
  const PrefixNode *na = tree.insert(nullptr, a.data(), 4);
  ASSERT_TRUE(na);
  EXPECT_EQ(tree.find(nullptr, collides.data(), 4), nullptr);
  EXPECT_EQ(tree.insert(nullptr, collides.data(), 4), nullptr);
  EXPECT_EQ(tree.size(), 1);
  EXPECT_EQ(na->tokens, a);
}

TEST(PrefixTreeTest, ParentIdentityIsConfirmed) {
  PrefixTree tree(firstTokenHash);
  std::vector<int32_t> a = {1, 2, 3, 4}, b = {5, 6, 7, 8};
  const PrefixNode *na = tree.insert(nullptr, a.data(), 4);
  ASSERT_TRUE(tree.insert(na, b.data(), 4));
  // b's hash ignores the parent, yet b at the start of a sequence is not the
  // node that follows a.
  EXPECT_EQ(tree.find(nullptr, b.data(), 4), nullptr);
}

TEST(PrefixTreeTest, ReleaseErasesUnreferencedNodesAndAncestors) {
  PrefixTree tree;
  std::vector<int32_t> a = {1, 2}, b = {3, 4}, c = {5, 6};
  const PrefixNode *na = tree.insert(nullptr, a.data(), 2);
  const PrefixNode *nb = tree.insert(na, b.data(), 2);
  const PrefixNode *nc = tree.insert(nb, c.data(), 2);
  tree.release(na);
  tree.release(nb);
  // The child keeps its ancestors alive.
  EXPECT_EQ(tree.size(), 3);
  EXPECT_EQ(tree.find(nullptr, a.data(), 2), na);
  tree.release(nc);
  EXPECT_EQ(tree.size(), 0);
  EXPECT_EQ(tree.find(nullptr, a.data(), 2), nullptr);
}

TEST(PrefixTreeTest, HashIsReusableOnceTheCollidingNodeIsGone) {
  PrefixTree tree(firstTokenHash);
  std::vector<int32_t> a = {1, 2}, collides = {1, 3};
  tree.release(tree.insert(nullptr, a.data(), 2));
  const PrefixNode *node = tree.insert(nullptr, collides.data(), 2);
  ASSERT_TRUE(node);
  EXPECT_EQ(node->tokens, collides);
  EXPECT_EQ(tree.find(nullptr, a.data(), 2), nullptr);
}

} // namespace
