//===- Bpe.cpp - Byte-level BPE model: vocab and ranked merges ------------===//
#include "text/tokenizer/Bpe.h"

#include "Support/Json.h"
#include "text/tokenizer/ByteLevel.h"

#include <algorithm>
#include <limits>

namespace cohere2c::text {

/// The merges as an open-addressing hash table from the pair of token ids to
/// the merge's rank and the merged token's id: the lookup the merge loop
/// makes for every adjacent pair.
class BpeModel::MergeTable {
public:
  struct Merge {
    uint32_t rank;
    int32_t merged;
  };

  explicit MergeTable(size_t count) {
    unsigned bits = 4;
    while ((size_t(1) << bits) < 2 * count)
      ++bits;
    slots_.assign(size_t(1) << bits, Slot{kEmpty, {}});
    mask_ = slots_.size() - 1;
    shift_ = 64 - bits;
  }

  /// Adds or replaces (a later merge of the same pair wins, as when
  /// tokenizers collects the merges into its map).
  void insert(int32_t left, int32_t right, Merge merge) {
    slots_[find(key(left, right))] = Slot{key(left, right), merge};
  }

  const Merge *lookup(int32_t left, int32_t right) const {
    const Slot &slot = slots_[find(key(left, right))];
    return slot.key == kEmpty ? nullptr : &slot.merge;
  }

private:
  struct Slot {
    uint64_t key;
    Merge merge;
  };
  static constexpr uint64_t kEmpty = std::numeric_limits<uint64_t>::max();

  static uint64_t key(int32_t left, int32_t right) {
    return (uint64_t(uint32_t(left)) << 32) | uint32_t(right);
  }
  /// The index of the slot holding `k`, or of the empty slot where it would
  /// go. Fibonacci hashing: the top bits of the product depend on all bits
  /// of the key.
  size_t find(uint64_t k) const {
    size_t i = size_t((k * 0x9E3779B97F4A7C15ull) >> shift_);
    while (slots_[i].key != k && slots_[i].key != kEmpty)
      i = (i + 1) & mask_;
    return i;
  }

  std::vector<Slot> slots_;
  size_t mask_;
  unsigned shift_;
};

namespace {

void requireNullOr(const JsonNode &model, const char *field,
                   const nlohmann::json &allowed) {
  JsonNode value = model.optionalMember(field);
  if (!value.isNull() && value.value() != allowed)
    value.fail(std::string("unsupported value ") + jsonExcerpt(value.value()) +
               " (supported: null or " + allowed.dump() + ")");
}

/// One merge candidate: the pair of symbols starting at `pos`.
struct Candidate {
  uint32_t rank;
  int32_t pos;
  int32_t merged;
  /// Orders the heap so its top is the lowest rank, then the leftmost.
  bool operator<(const Candidate &other) const {
    return rank != other.rank ? rank > other.rank : pos > other.pos;
  }
};

/// A symbol of the word being merged, in a doubly linked list over the
/// original positions; a symbol merged into its left neighbour is dead.
struct Symbol {
  int32_t id;
  int32_t prev;
  int32_t next;
  bool alive;
};

} // namespace

BpeModel::BpeModel() : cache_(std::make_unique<WordCache>()) {}
BpeModel::~BpeModel() = default;

std::unique_ptr<BpeModel> BpeModel::parse(const JsonNode &node) {
  std::string type = node.type();
  if (type != "BPE")
    node.member("type").fail("unsupported model '" + type + "'");
  JsonNode dropout = node.optionalMember("dropout");
  if (!dropout.isNull() && dropout.value() != 0)
    dropout.fail("unsupported dropout " + jsonExcerpt(dropout.value()) +
                 " (supported: null or 0)");
  requireNullOr(node, "continuing_subword_prefix", nullptr);
  requireNullOr(node, "end_of_word_suffix", nullptr);
  requireNullOr(node, "fuse_unk", false);
  requireNullOr(node, "byte_fallback", false);

  std::unique_ptr<BpeModel> model(new BpeModel());
  JsonNode ignoreMerges = node.optionalMember("ignore_merges");
  model->ignoreMerges_ = !ignoreMerges.isNull() && ignoreMerges.asBool();
  model->parseVocab(node.member("vocab"));
  model->parseMerges(node.member("merges"));

  JsonNode unk = node.optionalMember("unk_token");
  if (!unk.isNull()) {
    model->unkId_ = model->tokenToId(unk.asString());
    if (!model->unkId_)
      unk.fail("unk_token '" + unk.asString() + "' is not in the vocab");
  }
  for (unsigned b = 0; b < 256; ++b)
    model->byteIds_[b] =
        model->tokenToId(std::string(byte_level::charOf(uint8_t(b))))
            .value_or(-1);
  return model;
}

void BpeModel::parseVocab(const JsonNode &vocab) {
  if (!vocab.value().is_object())
    vocab.fail(std::string("expected an object, found ") +
               vocab.value().type_name());
  vocab_.reserve(vocab.value().size());
  for (auto it = vocab.value().begin(); it != vocab.value().end(); ++it) {
    JsonNode entry = vocab.member(it.key());
    auto id = int32_t(entry.asInt(0, kMaxId - 1));
    if (size_t(id) >= tokens_.size()) {
      tokens_.resize(size_t(id) + 1);
      hasId_.resize(size_t(id) + 1, false);
    }
    if (hasId_[size_t(id)])
      entry.fail("id " + std::to_string(id) + " is also the id of '" +
                 tokens_[size_t(id)] + "'");
    hasId_[size_t(id)] = true;
    tokens_[size_t(id)] = it.key();
    vocab_.emplace(it.key(), id);
  }
}

void BpeModel::parseMerges(const JsonNode &merges) {
  const nlohmann::json &list = merges.value();
  if (!list.is_array())
    merges.fail(std::string("expected an array, found ") + list.type_name());
  merges_ = std::make_unique<MergeTable>(list.size());
  // All pairs, or all "a b" strings (serde's untagged MergeType).
  bool pairs = !list.empty() && list[0].is_array();
  uint32_t rank = 0;
  for (size_t i = 0; i < list.size(); ++i) {
    const nlohmann::json &merge = list[i];
    if (pairs && merge.is_array() && merge.size() == 2 &&
        merge[0].is_string() && merge[1].is_string()) {
      addMerge(merges.element(i), merge[0].get<std::string>(),
               merge[1].get<std::string>(), rank++);
      continue;
    }
    if (!pairs && merge.is_string()) {
      const std::string &line = merge.get_ref<const std::string &>();
      if (line.rfind("#version", 0) == 0)
        continue;
      size_t space = line.find(' ');
      if (space != std::string::npos &&
          line.find(' ', space + 1) == std::string::npos) {
        addMerge(merges.element(i), line.substr(0, space),
                 line.substr(space + 1), rank++);
        continue;
      }
    }
    merges.element(i).fail(
        pairs ? "expected a pair of tokens [\"a\", \"b\"] like merge 0"
              : "expected \"a b\" (two tokens, one space) like merge 0");
  }
}

void BpeModel::addMerge(const JsonNode &at, const std::string &left,
                        const std::string &right, uint32_t rank) {
  auto idOf = [&](const std::string &token) {
    std::optional<int32_t> id = tokenToId(token);
    if (!id)
      at.fail("merge token '" + token + "' is not in the vocab");
    return *id;
  };
  int32_t leftId = idOf(left), rightId = idOf(right);
  merges_->insert(leftId, rightId, {rank, idOf(left + right)});
}

std::optional<int32_t> BpeModel::tokenToId(const std::string &token) const {
  auto it = vocab_.find(token);
  if (it == vocab_.end())
    return std::nullopt;
  return it->second;
}

const std::string *BpeModel::idToToken(int32_t id) const {
  if (id < 0 || size_t(id) >= tokens_.size() || !hasId_[size_t(id)])
    return nullptr;
  return &tokens_[size_t(id)];
}

void BpeModel::tokenize(std::string_view bytes,
                        std::vector<int32_t> &ids) const {
  if (ignoreMerges_) {
    if (std::optional<int32_t> id = tokenToId(byte_level::encode(bytes))) {
      ids.push_back(*id);
      return;
    }
  }
  bool cacheable = bytes.size() < WordCache::kMaxWordBytes;
  if (cacheable && cache_->lookup(bytes, ids))
    return;
  size_t first = ids.size();
  for (char c : bytes) {
    int32_t id = byteIds_[uint8_t(c)];
    if (id >= 0)
      ids.push_back(id);
    else if (unkId_)
      ids.push_back(*unkId_);
  }
  if (ids.size() - first <= kShortWord) {
    ids.resize(first + mergeShortWord(ids.data() + first, ids.size() - first));
  } else {
    thread_local std::vector<int32_t> symbols;
    symbols.assign(ids.begin() + std::ptrdiff_t(first), ids.end());
    mergeAll(symbols);
    ids.resize(first);
    ids.insert(ids.end(), symbols.begin(), symbols.end());
  }
  if (cacheable)
    cache_->insert(bytes, ids.data() + first, ids.size() - first);
}

size_t BpeModel::mergeShortWord(int32_t *word, size_t n) const {
  uint32_t ranks[kShortWord];
  int32_t merged[kShortWord];
  auto rankPair = [&](size_t i) {
    const MergeTable::Merge *merge = merges_->lookup(word[i], word[i + 1]);
    ranks[i] = merge ? merge->rank : kNoMerge;
    merged[i] = merge ? merge->merged : -1;
  };
  for (size_t i = 0; i + 1 < n; ++i)
    rankPair(i);
  while (n > 1) {
    size_t best = 0;
    for (size_t i = 1; i + 1 < n; ++i)
      if (ranks[i] < ranks[best])
        best = i;
    if (ranks[best] == kNoMerge)
      break;
    word[best] = merged[best];
    --n;
    // The symbol after `best` goes; the pairs after it move one left.
    for (size_t i = best + 1; i < n; ++i)
      word[i] = word[i + 1];
    for (size_t i = best + 1; i + 1 < n; ++i) {
      ranks[i] = ranks[i + 1];
      merged[i] = merged[i + 1];
    }
    if (best > 0)
      rankPair(best - 1);
    if (best + 1 < n)
      rankPair(best);
  }
  return n;
}

void BpeModel::mergeAll(std::vector<int32_t> &word) const {
  thread_local std::vector<Symbol> symbols;
  thread_local std::vector<Candidate> queue;
  auto n = int32_t(word.size());
  symbols.resize(size_t(n));
  queue.clear();
  auto consider = [&](int32_t pos) {
    int32_t next = symbols[size_t(pos)].next;
    if (const MergeTable::Merge *merge = merges_->lookup(
            symbols[size_t(pos)].id, symbols[size_t(next)].id)) {
      queue.push_back({merge->rank, pos, merge->merged});
      std::push_heap(queue.begin(), queue.end());
    }
  };
  for (int32_t i = 0; i < n; ++i)
    symbols[size_t(i)] = {word[size_t(i)], i - 1, i + 1 < n ? i + 1 : -1, true};
  for (int32_t i = 0; i + 1 < n; ++i)
    consider(i);

  while (!queue.empty()) {
    std::pop_heap(queue.begin(), queue.end());
    Candidate top = queue.back();
    queue.pop_back();
    Symbol &left = symbols[size_t(top.pos)];
    if (!left.alive || left.next < 0)
      continue;
    Symbol &right = symbols[size_t(left.next)];
    // A candidate is stale when either symbol changed since it was queued.
    const MergeTable::Merge *merge = merges_->lookup(left.id, right.id);
    if (!merge || merge->merged != top.merged)
      continue;
    left.id = top.merged;
    right.alive = false;
    left.next = right.next;
    if (left.next >= 0)
      symbols[size_t(left.next)].prev = top.pos;
    if (left.prev >= 0)
      consider(left.prev);
    if (left.next >= 0)
      consider(top.pos);
  }

  word.clear();
  for (int32_t i = 0; i >= 0; i = symbols[size_t(i)].next)
    word.push_back(symbols[size_t(i)].id);
}

} // namespace cohere2c::text
