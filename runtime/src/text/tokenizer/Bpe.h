//===- Bpe.h - Byte-level BPE model: vocab and ranked merges --------------===//
//
// tokenizers' BPE model (models/bpe/model.rs, word.rs) over the words the
// ByteLevel pre-tokenizer produces. A word starts as one symbol per byte
// (the vocab id of the byte's character, byte_level::charOf); then, while
// some adjacent pair of symbols has a merge, the pair whose merge has the
// lowest rank (its index in "merges"), the leftmost of equal ones, becomes
// the merged token. tokenizers' Word::merge_all does exactly this with a
// priority queue of (rank, position) and a linked list of symbols, and so
// does tokenize().
//
// Supported model fields: vocab; merges as "a b" strings (lines starting
// with "#version" skipped, as tokenizers does) or ["a", "b"] pairs;
// ignore_merges; unk_token; dropout null (or 0); continuing_subword_prefix
// and end_of_word_suffix null; fuse_unk and byte_fallback false. Anything
// else is an error naming its JSON path.
//
// Immutable after parse() but for its word cache (WordCache.h); tokenize()
// is safe from many threads.
//
//===----------------------------------------------------------------------===//
#ifndef COHERE2C_TEXT_TOKENIZER_BPE_H
#define COHERE2C_TEXT_TOKENIZER_BPE_H

#include "text/tokenizer/Json.h"
#include "text/tokenizer/WordCache.h"

#include <array>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace cohere2c::text {

class BpeModel {
public:
  /// Vocab ids must be below this (the id -> token table is dense).
  static constexpr int64_t kMaxId = int64_t(1) << 26;

  /// The model of tokenizer.json's /model. Throws TokenizerJsonError: a type
  /// other than "BPE", a field set to what is not supported, an id that is
  /// negative, too large or used twice, a merge that is neither "a b" nor
  /// ["a", "b"], a merge naming a token (or giving one) not in the vocab.
  static std::unique_ptr<BpeModel> parse(const JsonNode &node);
  ~BpeModel();

  /// Appends the ids of one word, given as its raw bytes. A byte whose
  /// character is not in the vocab becomes unk_token, or nothing without one
  /// (tokenizers' merge_word).
  void tokenize(std::string_view bytes, std::vector<int32_t> &ids) const;

  std::optional<int32_t> tokenToId(const std::string &token) const;
  /// The token of `id`, or nullptr when no vocab entry has that id.
  const std::string *idToToken(int32_t id) const;
  /// The number of vocab entries (tokenizers' get_vocab_size).
  size_t size() const { return vocab_.size(); }
  /// The largest id + 1.
  int64_t idLimit() const { return int64_t(tokens_.size()); }

  class MergeTable;

private:
  BpeModel();
  void parseVocab(const JsonNode &vocab);
  void parseMerges(const JsonNode &merges);
  void addMerge(const JsonNode &at, const std::string &left,
                const std::string &right, uint32_t rank);
  /// Merges a word of at most kShortWord symbols in place by scanning its
  /// pairs for the lowest rank: on short words (most of them) this is
  /// faster than the queue and gives the same merges. Returns the new length.
  size_t mergeShortWord(int32_t *word, size_t n) const;
  /// Merges a word of any length: tokenizers' queue of (rank, position).
  void mergeAll(std::vector<int32_t> &symbols) const;

  static constexpr size_t kShortWord = 32;
  static constexpr uint32_t kNoMerge = ~uint32_t(0);

  std::unordered_map<std::string, int32_t> vocab_;
  /// tokens_[id], empty with hasId_[id] false for an id no entry has.
  std::vector<std::string> tokens_;
  std::vector<bool> hasId_;
  std::unique_ptr<MergeTable> merges_;
  /// The vocab id of each byte's character, -1 if it has none.
  std::array<int32_t, 256> byteIds_;
  std::optional<int32_t> unkId_;
  bool ignoreMerges_ = false;
  std::unique_ptr<WordCache> cache_;
};

} // namespace cohere2c::text

#endif // COHERE2C_TEXT_TOKENIZER_BPE_H
