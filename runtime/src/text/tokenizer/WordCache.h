//===- WordCache.h - The ids of recently seen words, shared by threads ----===//
//
// BPE merging costs tens of nanoseconds per byte of a word, and text repeats
// its words (tokenizers keeps such a cache in its BPE model, models/bpe/
// mod.rs, for words under 256 bytes). The cache is split into shards, each
// with its own lock, so threads encoding at once rarely wait for each other.
// A shard is a fixed open-addressing table whose words and ids are appended
// to two arrays; a full shard takes no more words (as tokenizers' cache), so
// memory stays bounded (at most 4 MiB: 32768 words) and no entry ever
// changes.
//
// Thread-safe.
//
//===----------------------------------------------------------------------===//
#ifndef COHERE2C_TEXT_TOKENIZER_WORDCACHE_H
#define COHERE2C_TEXT_TOKENIZER_WORDCACHE_H

#include <array>
#include <cstdint>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

namespace cohere2c::text {

class WordCache {
public:
  /// Words of this many bytes or more are not cached.
  static constexpr size_t kMaxWordBytes = 256;

  /// Appends the cached ids of `word` to `ids`; false (appending nothing)
  /// when it is not cached.
  bool lookup(std::string_view word, std::vector<int32_t> &ids) const;
  /// Caches the ids of `word` (shorter than kMaxWordBytes), unless its shard
  /// is full.
  void insert(std::string_view word, const int32_t *ids, size_t count) const;

private:
  static constexpr size_t kShards = 64;
  /// Slots per shard; at most half of them are used.
  static constexpr size_t kSlots = 1024;
  static constexpr size_t kWordBytesPerShard = 8 * 1024;

  struct Slot {
    uint64_t hash = 0;
    uint32_t wordOffset = 0, idOffset = 0;
    uint16_t wordBytes = 0, idCount = 0;
    bool used = false;
  };
  struct Shard {
    std::mutex mutex;
    std::vector<Slot> slots = std::vector<Slot>(kSlots);
    size_t used = 0;
    std::string words;
    std::vector<int32_t> ids;
  };

  static uint64_t hashOf(std::string_view word);
  /// The slot of `word` in `shard`, or the unused slot where it would go.
  static Slot &find(Shard &shard, std::string_view word, uint64_t hash);

  mutable std::array<Shard, kShards> shards_;
};

} // namespace cohere2c::text

#endif // COHERE2C_TEXT_TOKENIZER_WORDCACHE_H
