//===- HashModel.cpp ------------------------------------------------------===//

#include "HashModel.h"

#include <algorithm>
#include <string>

namespace cohere2c::test {

namespace {

/// SplitMix64's finalizer (Steele et al., "Fast splittable pseudorandom
/// number generators", 2014): every input bit flips about half the output.
uint64_t mix(uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

std::string groupName(int64_t group) {
  return "group " + std::to_string(group);
}

/// Where the slot of position p of row s lies in `group`'s pool; -1 with
/// `error` set when the block table has no valid block there.
int64_t slotIndex(const StepInput &input, int64_t blockSize, int64_t numBlocks,
                  int64_t group, int64_t s, int64_t p, Status &error) {
  std::string where = std::string("hash model: sequence row ") +
                      std::to_string(s) + ", position " + std::to_string(p) +
                      ", " + groupName(group) + ": ";
  int64_t k = p / blockSize, width = input.tableWidth;
  if (k >= width) {
    error = Status::error(where + "logical block " + std::to_string(k) +
                          " is past the table width " + std::to_string(width));
    return -1;
  }
  int32_t block = input.tables[group][s * width + k];
  if (block < 0 || block >= numBlocks) {
    error = Status::error(where + "logical block " + std::to_string(k) +
                          " is block " + std::to_string(block));
    return -1;
  }
  return block * blockSize + p % blockSize;
}

} // namespace

HashModel::HashModel(const Manifest &manifest)
    : vocabSize(manifest.config.vocabSize) {
  for (const KVGroup &group : manifest.kvGroups)
    windows.push_back(group.window);
}

int64_t HashModel::widestGroup() const {
  // Windows ascend with the group, a full group (0) first.
  return windows.front() == 0 ? 0 : numGroups() - 1;
}

uint64_t HashModel::chain(uint64_t previous, int32_t token, int64_t position) {
  return mix(previous ^ mix((uint64_t)position << 32 | (uint32_t)token));
}

std::vector<uint64_t> HashModel::chains(const std::vector<int32_t> &tokens) {
  std::vector<uint64_t> out(tokens.size());
  uint64_t previous = kEmptyChain;
  for (size_t j = 0; j < tokens.size(); ++j)
    previous = out[j] = chain(previous, tokens[j], j);
  return out;
}

int64_t HashModel::firstKey(int64_t group, int64_t position) const {
  if (windows[group] == 0)
    return 0;
  return std::max<int64_t>(0, position - windows[group] + 1);
}

uint64_t HashModel::fold(uint64_t hash, int64_t group, uint64_t key) {
  return mix(hash ^ mix(key + (uint64_t)group));
}

void HashModel::logits(uint64_t hash, float *row) const {
  for (int64_t v = 0; v < vocabSize; ++v)
    row[v] = (float)(mix(hash ^ ((uint64_t)v << 40)) >> 52) / 512.0f;
}

void HashModel::logitsAt(const std::vector<uint64_t> &keys, int64_t p,
                         float *row) const {
  uint64_t hash = 0;
  for (int64_t group = 0; group < numGroups(); ++group)
    for (int64_t j = firstKey(group, p); j <= p; ++j)
      hash = fold(hash, group, keys[j]);
  logits(hash, row);
}

HashModelExecutor::HashModelExecutor(const Manifest &manifest,
                                     int64_t blockSize, int64_t numBlocks)
    : hashModel(manifest), blockSize(blockSize),
      limits(StepLimits::of(manifest, blockSize, numBlocks)),
      pool(numBlocks * blockSize) {}

int64_t HashModelExecutor::bytesPerBlock() const {
  return blockSize * (int64_t)sizeof(Slot);
}

const HashModelExecutor::Slot *HashModelExecutor::read(const StepInput &input,
                                                       int64_t group, int64_t s,
                                                       int64_t p,
                                                       Status &error) const {
  int64_t index =
      slotIndex(input, blockSize, limits.numBlocks, group, s, p, error);
  if (index < 0)
    return nullptr;
  const Slot &slot = pool[index];
  if (slot.position == p && slot.group == group)
    return &slot;
  error = Status::error(
      std::string("hash model: sequence row ") + std::to_string(s) +
      " reads position " + std::to_string(p) + " in " + groupName(group) +
      " from block " + std::to_string(index / blockSize) + " slot " +
      std::to_string(index % blockSize) + ", which " +
      (slot.position < 0 ? std::string("was never written")
                         : "holds position " + std::to_string(slot.position) +
                               " of " + groupName(slot.group)));
  return nullptr;
}

Status HashModelExecutor::write(const StepInput &input, int64_t t) {
  const int64_t s = input.seqRows[t], p = input.positions[t];
  // The previous position's KV, from the group that keeps the most (a
  // window of at least 2 keeps it too).
  uint64_t previous = HashModel::kEmptyChain;
  if (p > 0) {
    Status error = Status::success();
    const Slot *before = read(input, hashModel.widestGroup(), s, p - 1, error);
    if (!before)
      return error;
    previous = before->chain;
  }
  Slot value{(int32_t)p, input.ids[t], -1,
             HashModel::chain(previous, input.ids[t], p)};
  for (int64_t group = 0; group < hashModel.numGroups(); ++group) {
    Status error = Status::success();
    int64_t index =
        slotIndex(input, blockSize, limits.numBlocks, group, s, p, error);
    if (index < 0)
      return error;
    pool[index] = value;
    pool[index].group = group;
  }
  return Status::success();
}

Status HashModelExecutor::readGroup(const StepInput &input, int64_t t,
                                    int64_t group, uint64_t &hash) const {
  const int64_t s = input.seqRows[t], p = input.positions[t];
  const int64_t first = hashModel.firstKey(group, p);
  const int64_t widest = hashModel.widestGroup();
  auto bad = [&](int64_t j, const std::string &what) {
    return Status::error("hash model: sequence row " + std::to_string(s) +
                         ", query at " + std::to_string(p) + ", " +
                         groupName(group) + ", key " + std::to_string(j) +
                         ": " + what);
  };
  const Slot *previous = nullptr;
  for (int64_t j = first; j <= p; ++j) {
    Status error = Status::success();
    const Slot *slot = read(input, group, s, j, error);
    if (!slot)
      return error;
    if (j == 0 &&
        slot->chain != HashModel::chain(HashModel::kEmptyChain, slot->token, 0))
      return bad(j, "does not start a sequence");
    if (previous &&
        slot->chain != HashModel::chain(previous->chain, slot->token, j))
      return bad(j, "does not continue the key before it (another prefix)");
    if (j == p && slot->token != input.ids[t])
      return bad(j, "holds token " + std::to_string(slot->token) +
                        ", not the query's " + std::to_string(input.ids[t]));
    if (group != widest) {
      const Slot *kept = read(input, widest, s, j, error);
      if (!kept)
        return error;
      if (kept->chain != slot->chain)
        return bad(j, "differs from the key of " + groupName(widest));
    }
    hash = HashModel::fold(hash, group, slot->chain);
    previous = slot;
  }
  return Status::success();
}

Status HashModelExecutor::attend(const StepInput &input, int64_t t,
                                 bool wantLogits, uint64_t &hash) const {
  hash = 0;
  for (int64_t group = 0; group < hashModel.numGroups(); ++group) {
    if (hashModel.window(group) == 0 && !wantLogits)
      continue;
    Status read = readGroup(input, t, group, hash);
    if (!read.ok())
      return read;
  }
  return Status::success();
}

Status HashModelExecutor::run(const StepInput &input, StepOutput &output) {
  int64_t widest = hashModel.window(hashModel.widestGroup());
  if (widest != 0 && widest < 2)
    return Status::error("hash model: sliding layers alone need a window of "
                         "at least 2, found " +
                         std::to_string(widest));
  Status checked = input.check(limits);
  if (!checked.ok())
    return checked;
  for (size_t t = 0; t < input.ids.size(); ++t) {
    Status written = write(input, t);
    if (!written.ok())
      return written;
  }
  std::vector<bool> wanted(input.ids.size(), false);
  for (int32_t t : input.logitRows)
    wanted[t] = true;
  std::vector<uint64_t> hashes(input.ids.size());
  for (size_t t = 0; t < input.ids.size(); ++t) {
    Status read = attend(input, t, wanted[t], hashes[t]);
    if (!read.ok())
      return read;
  }
  const int64_t vocab = hashModel.vocab();
  output.logits.resize(input.logitRows.size() * vocab);
  for (size_t r = 0; r < input.logitRows.size(); ++r)
    hashModel.logits(hashes[input.logitRows[r]],
                     output.logits.data() + r * vocab);
  sampledTokensOnHost(input, vocab, output);
  return Status::success();
}

} // namespace cohere2c::test
