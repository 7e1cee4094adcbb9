//===- WordCache.cpp - The ids of recently seen words, shared by threads --===//
#include "text/tokenizer/WordCache.h"

#include <cstring>

namespace cohere2c::text {

uint64_t WordCache::hashOf(std::string_view word) {
  // Eight bytes at a time, each step a multiply and a rotation: words are
  // short and this is on every word's path.
  constexpr uint64_t kMultiplier = 0x9E3779B97F4A7C15ull;
  uint64_t hash = word.size() * kMultiplier;
  size_t pos = 0;
  for (; pos + 8 <= word.size(); pos += 8) {
    uint64_t chunk;
    std::memcpy(&chunk, word.data() + pos, 8);
    hash = ((hash ^ chunk) * kMultiplier);
    hash ^= hash >> 29;
  }
  uint64_t tail = 0;
  for (; pos < word.size(); ++pos)
    tail = (tail << 8) | uint8_t(word[pos]);
  hash = (hash ^ tail) * kMultiplier;
  return hash ^ (hash >> 32);
}

WordCache::Slot &WordCache::find(Shard &shard, std::string_view word,
                                 uint64_t hash) {
  for (size_t i = hash % kSlots;; i = (i + 1) % kSlots) {
    Slot &slot = shard.slots[i];
    if (!slot.used)
      return slot;
    if (slot.hash == hash && slot.wordBytes == word.size() &&
        std::memcmp(shard.words.data() + slot.wordOffset, word.data(),
                    word.size()) == 0)
      return slot;
  }
}

bool WordCache::lookup(std::string_view word, std::vector<int32_t> &ids) const {
  uint64_t hash = hashOf(word);
  Shard &shard = shards_[hash >> 58];
  std::lock_guard<std::mutex> lock(shard.mutex);
  const Slot &slot = find(shard, word, hash);
  if (!slot.used)
    return false;
  const int32_t *begin = shard.ids.data() + slot.idOffset;
  ids.insert(ids.end(), begin, begin + slot.idCount);
  return true;
}

void WordCache::insert(std::string_view word, const int32_t *ids,
                       size_t count) const {
  uint64_t hash = hashOf(word);
  Shard &shard = shards_[hash >> 58];
  std::lock_guard<std::mutex> lock(shard.mutex);
  if (2 * shard.used >= kSlots ||
      shard.words.size() + word.size() > kWordBytesPerShard)
    return;
  Slot &slot = find(shard, word, hash);
  if (slot.used)
    return; // Another thread cached it meanwhile.
  slot = Slot{hash,
              uint32_t(shard.words.size()),
              uint32_t(shard.ids.size()),
              uint16_t(word.size()),
              uint16_t(count),
              true};
  shard.words.append(word);
  shard.ids.insert(shard.ids.end(), ids, ids + count);
  ++shard.used;
}

} // namespace cohere2c::text
