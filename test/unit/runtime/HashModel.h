//===- HashModel.h - A model whose KV entries hash the whole context ------===//
//
// A stand-in for a transformer in tests of the scheduler and the paged KV
// cache: exact integer arithmetic instead of floating point, fast enough for
// thousands of random request mixes, and as sensitive to the KV it reads as a
// real model. The KV entry of position j (the same in every KV group) is
//
//     chain(j) = mix(chain(j - 1), t_j, j),      chain(-1) = kEmptyChain,
//
// a function of every token up to j, as a transformer's K and V are (the
// residual stream carries the whole prefix to every layer). The query at
// position p reads, through its sequence's block tables, the keys it sees in
// each group: positions [0, p] of a full group, (p - W, p] of a group of
// window W; its logits are a hash of every key it read. So the tokens a
// request generates are an exact function of its true context, and a wrong
// block table, a block released too early, a stale or evicted block, or a
// block from another prefix gives other tokens (but for a chance of 1 in the
// vocabulary per token), when the executor does not catch it where it reads.
//
// HashModelExecutor keeps one pool of slots (block id x offset) that all KV
// groups draw from, as the executors do, each slot holding the position,
// token, chain value and group written there, and refuses a step (an error
// Status naming the sequence row, position, group, block and slot) that
// reads a slot never written or holding another position or another group's
// entry (two groups' tables naming one block), whose chain does not continue
// the slot before it, whose groups disagree at a position, or that fails
// StepInput::check.
//
// A model of sliding layers alone whose widest window is 1 is refused: each
// query would see only its own key, so nothing would tie a key to the prefix
// before it.
//
//===----------------------------------------------------------------------===//
#ifndef COHERE2C_TEST_HASHMODEL_H
#define COHERE2C_TEST_HASHMODEL_H

#include "Executor.h"

#include <cstdint>
#include <vector>

namespace cohere2c::test {

class HashModel {
public:
  static constexpr uint64_t kEmptyChain = 0x243f6a8885a308d3ull;

  /// The KV groups and their windows of `manifest`, its vocabulary.
  explicit HashModel(const Manifest &manifest);

  static uint64_t chain(uint64_t previous, int32_t token, int64_t position);
  /// chain(j) of every position of `tokens`.
  static std::vector<uint64_t> chains(const std::vector<int32_t> &tokens);

  int64_t numGroups() const { return (int64_t)windows.size(); }
  /// Group g's window (0: full).
  int64_t window(int64_t group) const { return windows[group]; }
  /// The group that keeps the most keys of a sequence: a full group, else
  /// the widest window's.
  int64_t widestGroup() const;
  int64_t vocab() const { return vocabSize; }
  /// The first key the query at `position` reads in `group`.
  int64_t firstKey(int64_t group, int64_t position) const;

  /// The logits of a query, as the keys it reads are folded in: each
  /// group's positions in order, the groups in order.
  static uint64_t fold(uint64_t hash, int64_t group, uint64_t key);
  /// `vocab()` logits in [0, 8), multiples of 1/512, from a fold's result.
  void logits(uint64_t hash, float *row) const;
  /// The logits of position p of a sequence whose chain values are `keys`
  /// (at least p + 1 of them): what the executor computes when it reads
  /// the right KV.
  void logitsAt(const std::vector<uint64_t> &keys, int64_t p, float *row) const;

private:
  std::vector<int64_t> windows;
  int64_t vocabSize = 0;
};

class HashModelExecutor : public Executor {
public:
  /// One slot of the pool: position -1 until written; the group whose
  /// block table addressed it when written.
  struct Slot {
    int32_t position = -1;
    int32_t token = 0;
    int64_t group = -1;
    uint64_t chain = 0;
  };

  /// A pool of `numBlocks` blocks of `blockSize` tokens that every KV group
  /// of `manifest` draws from.
  HashModelExecutor(const Manifest &manifest, int64_t blockSize,
                    int64_t numBlocks);

  /// Writes the chain value of every token of the step at its slot, in step
  /// order, then reads for every token the keys of the groups with a window
  /// and, for the rows whose logits are wanted, the full group's too (a
  /// full block table is never cut, so the last row of a sequence reads
  /// every key the rows before it read). Errors: see the file comment.
  Status run(const StepInput &input, StepOutput &output) override;
  int64_t bytesPerBlock() const override;

  const HashModel &model() const { return hashModel; }
  const Slot &slot(int32_t block, int64_t offset) const {
    return pool[block * blockSize + offset];
  }

private:
  /// The slot of position p of sequence row s in `group`, checked to hold
  /// p; null with `error` set otherwise.
  const Slot *read(const StepInput &input, int64_t group, int64_t s, int64_t p,
                   Status &error) const;
  Status write(const StepInput &input, int64_t t);
  /// Reads the keys of token t (all groups when `wantLogits`, else those
  /// with a window) and returns their fold in `hash`.
  Status attend(const StepInput &input, int64_t t, bool wantLogits,
                uint64_t &hash) const;
  Status readGroup(const StepInput &input, int64_t t, int64_t group,
                   uint64_t &hash) const;

  HashModel hashModel;
  int64_t blockSize;
  StepLimits limits;
  std::vector<Slot> pool;
};

} // namespace cohere2c::test

#endif // COHERE2C_TEST_HASHMODEL_H
