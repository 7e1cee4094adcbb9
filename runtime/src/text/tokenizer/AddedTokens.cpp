//===- AddedTokens.cpp - tokenizer.json's added tokens --------------------===//
#include "text/tokenizer/AddedTokens.h"

#include "text/tokenizer/Utf8.h"

#include <algorithm>
#include <array>

namespace cohere2c::text {

/// A byte trie of the patterns of one pass, answering "the longest pattern
/// that starts here": scanning start positions left to right and taking the
/// longest gives daachorse's leftmost-longest matches.
class AddedVocabulary::Matcher {
public:
  /// False, changing nothing, when `pattern` is already there.
  bool add(std::string_view pattern, size_t token) {
    uint32_t node = 0;
    for (char c : pattern)
      node = childOrNew(node, uint8_t(c));
    if (nodes_[node].token >= 0)
      return false;
    nodes_[node].token = int64_t(token);
    first_[uint8_t(pattern[0])] = true;
    return true;
  }

  /// The longest pattern at text[pos]: sets `length` and `token`.
  bool longestAt(std::string_view text, size_t pos, size_t &length,
                 size_t &token) const {
    if (!first_[uint8_t(text[pos])])
      return false;
    bool found = false;
    uint32_t node = 0;
    for (size_t i = pos; i < text.size(); ++i) {
      node = child(node, uint8_t(text[i]));
      if (node == 0)
        break;
      if (nodes_[node].token >= 0) {
        found = true;
        length = i + 1 - pos;
        token = size_t(nodes_[node].token);
      }
    }
    return found;
  }

private:
  struct Node {
    std::vector<std::pair<uint8_t, uint32_t>> children;
    int64_t token = -1;
  };

  /// The child of `node` by `byte`, 0 (the root) for none.
  uint32_t child(uint32_t node, uint8_t byte) const {
    for (auto [label, next] : nodes_[node].children)
      if (label == byte)
        return next;
    return 0;
  }
  uint32_t childOrNew(uint32_t node, uint8_t byte) {
    if (uint32_t next = child(node, byte))
      return next;
    nodes_.emplace_back();
    auto next = uint32_t(nodes_.size() - 1);
    nodes_[node].children.emplace_back(byte, next);
    return next;
  }

  std::vector<Node> nodes_{1};
  std::array<bool, 256> first_{};
};

namespace {

/// Rust regex's \w (its Unicode "word" class), in PCRE2's property syntax.
constexpr const char *kWordCharPattern =
    R"(^[\p{Alphabetic}\p{M}\p{Nd}\p{Pc}\p{Join_Control}])";

bool sameOptions(const AddedToken &a, const AddedToken &b) {
  return a.special == b.special && a.normalized == b.normalized &&
         a.lstrip == b.lstrip && a.rstrip == b.rstrip &&
         a.singleWord == b.singleWord;
}

} // namespace

AddedVocabulary::AddedVocabulary() = default;
AddedVocabulary::~AddedVocabulary() = default;

std::unique_ptr<AddedVocabulary>
AddedVocabulary::parse(const JsonNode &node, const BpeModel &model,
                       const Normalizer &normalizer) {
  std::unique_ptr<AddedVocabulary> vocabulary(new AddedVocabulary());
  if (node.isNull())
    return vocabulary;
  auto nextId = int32_t(model.size());
  for (const JsonNode &entry : node.elements())
    vocabulary->addToken(entry, model, normalizer, nextId);

  for (size_t i = 0; i < vocabulary->tokens_.size(); ++i) {
    const AddedToken &token = vocabulary->tokens_[i];
    std::unique_ptr<Matcher> &matcher = token.normalized
                                            ? vocabulary->normalizedMatcher_
                                            : vocabulary->rawMatcher_;
    if (!matcher)
      matcher = std::make_unique<Matcher>();
    if (!matcher->add(token.pattern, i))
      node.fail("two added tokens match '" + token.pattern + "'");
    if (token.singleWord && !vocabulary->wordChar_)
      vocabulary->wordChar_ = std::move(*Regex::compile(kWordCharPattern));
  }
  return vocabulary;
}

void AddedVocabulary::addToken(const JsonNode &entry, const BpeModel &model,
                               const Normalizer &normalizer, int32_t &nextId) {
  AddedToken token;
  token.content = entry.member("content").asString();
  token.special = entry.member("special").asBool();
  token.normalized = entry.member("normalized").asBool();
  token.lstrip = entry.member("lstrip").asBool();
  token.rstrip = entry.member("rstrip").asBool();
  token.singleWord = entry.member("single_word").asBool();
  JsonNode idNode = entry.member("id");
  auto fileId = int32_t(idNode.asInt(0, BpeModel::kMaxId - 1));
  if (token.content.empty())
    return; // tokenizers ignores these.
  if (auto it = byContent_.find(token.content); it != byContent_.end()) {
    if (sameOptions(tokens_[it->second], token) &&
        tokens_[it->second].id == fileId)
      return;
    entry.fail("added token '" + token.content + "' is given twice");
  }

  std::optional<int32_t> vocabId = model.tokenToId(token.content);
  token.id = vocabId ? *vocabId : nextId++;
  if (fileId != token.id)
    idNode.fail("'" + token.content + "' has id " + std::to_string(fileId) +
                " in the file, but tokenizers assigns " +
                std::to_string(token.id) +
                " (its vocab id, or the next after the vocab)");
  if (!vocabId && model.idToToken(token.id))
    idNode.fail("id " + std::to_string(token.id) + " is the vocab's id of '" +
                *model.idToToken(token.id) + "'");
  std::string storage;
  token.pattern =
      token.normalized
          ? std::string(normalizer.normalize(token.content, storage))
          : token.content;
  byContent_.emplace(token.content, tokens_.size());
  byId_.emplace(token.id, tokens_.size());
  tokens_.push_back(std::move(token));
}

bool AddedVocabulary::acceptMatch(std::string_view text,
                                  const AddedToken &token, size_t previousEnd,
                                  size_t &begin, size_t &end) const {
  if (token.singleWord) {
    auto isWordChar = [&](size_t from, size_t to) {
      std::vector<std::pair<size_t, size_t>> matches;
      return wordChar_->findAll(text.substr(from, to - from), matches).ok() &&
             !matches.empty();
    };
    size_t after = end;
    if (end < text.size())
      utf8::decode(text, after);
    if ((begin > 0 && isWordChar(utf8::previousStart(text, begin), begin)) ||
        (end < text.size() && isWordChar(end, after)))
      return false;
  }
  if (token.lstrip) {
    size_t start = begin;
    while (start > 0) {
      size_t pos = utf8::previousStart(text, start);
      if (!utf8::isWhiteSpace(utf8::decode(text, pos)))
        break;
      start = utf8::previousStart(text, start);
    }
    begin = std::max(start, previousEnd);
  }
  if (token.rstrip) {
    for (size_t pos = end; pos < text.size();) {
      if (!utf8::isWhiteSpace(utf8::decode(text, pos)))
        break;
      end = pos;
    }
  }
  return true;
}

void AddedVocabulary::split(std::string_view text, bool normalizedTokens,
                            std::vector<Segment> &out) const {
  const Matcher *matcher =
      normalizedTokens ? normalizedMatcher_.get() : rawMatcher_.get();
  size_t previousEnd = 0;
  size_t pos = 0;
  while (matcher && pos < text.size()) {
    size_t length, index;
    if (!matcher->longestAt(text, pos, length, index)) {
      ++pos;
      continue;
    }
    size_t begin = pos, end = pos + length;
    // The automaton resumes after a match even when it is dropped.
    pos = end;
    const AddedToken &token = tokens_[index];
    if (!acceptMatch(text, token, previousEnd, begin, end))
      continue;
    if (previousEnd < begin)
      out.push_back({text.substr(previousEnd, begin - previousEnd), -1});
    out.push_back({text.substr(begin, end - begin), token.id});
    previousEnd = end;
  }
  if (previousEnd < text.size())
    out.push_back({text.substr(previousEnd), -1});
}

std::optional<int32_t>
AddedVocabulary::tokenToId(const std::string &content) const {
  auto it = byContent_.find(content);
  if (it == byContent_.end())
    return std::nullopt;
  return tokens_[it->second].id;
}

const AddedToken *AddedVocabulary::byId(int32_t id) const {
  auto it = byId_.find(id);
  return it == byId_.end() ? nullptr : &tokens_[it->second];
}

bool AddedVocabulary::isSpecialContent(const std::string &token) const {
  auto it = byContent_.find(token);
  return it != byContent_.end() && tokens_[it->second].special;
}

int64_t AddedVocabulary::idLimit() const {
  int64_t limit = 0;
  for (const AddedToken &token : tokens_)
    limit = std::max(limit, int64_t(token.id) + 1);
  return limit;
}

} // namespace cohere2c::text
