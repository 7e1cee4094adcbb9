//===- PreTokenizer.cpp - Splitting normalized text into words ------------===//
//
// A stage turns a piece into spans that cover it, each a match of the
// stage's pattern or not, and keeps, drops or joins them as the delimiter
// behaviour says: tokenizers' NormalizedString::split
// (tokenizer/normalizer.rs) and its Pattern implementations (pattern.rs).
//
//===----------------------------------------------------------------------===//
#include "text/tokenizer/PreTokenizer.h"

#include "text/tokenizer/Utf8.h"

#include <utf8proc.h>

#include <algorithm>
#include <cctype>

namespace cohere2c::text {

namespace {

constexpr const char *kGpt2Pattern =
    R"('s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+)"
    R"(| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+)";

/// tokenizers' SplitDelimiterBehavior.
enum class Behavior {
  Removed,
  Isolated,
  MergedWithPrevious,
  MergedWithNext,
  Contiguous
};

struct Span {
  size_t begin, end;
  bool isMatch;
};

/// Appends the non-empty pieces of `piece` that `spans` (covering it, in
/// order) give under `behavior`.
void applyBehavior(std::string_view piece, std::vector<Span> spans,
                   Behavior behavior, std::vector<std::string_view> &out) {
  std::vector<Span> kept;
  bool previousMatch = false;
  if (behavior == Behavior::MergedWithNext)
    std::reverse(spans.begin(), spans.end());
  for (const Span &span : spans) {
    bool join = false;
    switch (behavior) {
    case Behavior::Removed:
    case Behavior::Isolated:
      break;
    case Behavior::Contiguous:
      join = span.isMatch == previousMatch;
      break;
    case Behavior::MergedWithPrevious:
    case Behavior::MergedWithNext:
      join = span.isMatch && !previousMatch;
      break;
    }
    previousMatch = span.isMatch;
    if (join && !kept.empty()) {
      kept.back().begin = std::min(kept.back().begin, span.begin);
      kept.back().end = std::max(kept.back().end, span.end);
    } else {
      kept.push_back(span);
    }
  }
  if (behavior == Behavior::MergedWithNext)
    std::reverse(kept.begin(), kept.end());
  for (const Span &span : kept)
    if (span.end > span.begin &&
        !(behavior == Behavior::Removed && span.isMatch))
      out.push_back(piece.substr(span.begin, span.end - span.begin));
}

/// The spans of `piece` around the given matches (tokenizers' Pattern for a
/// regex: the gaps between matches are non-matches).
std::vector<Span>
spansAround(size_t length,
            const std::vector<std::pair<size_t, size_t>> &matches) {
  std::vector<Span> spans;
  size_t previous = 0;
  for (auto [begin, end] : matches) {
    if (previous != begin)
      spans.push_back({previous, begin, false});
    spans.push_back({begin, end, true});
    previous = end;
  }
  if (previous != length)
    spans.push_back({previous, length, false});
  return spans;
}

/// Rust's char::is_numeric.
bool isNumeric(char32_t cp) {
  if (cp < 0x80)
    return cp >= '0' && cp <= '9';
  utf8proc_category_t category = utf8proc_category(utf8proc_int32_t(cp));
  return category == UTF8PROC_CATEGORY_ND || category == UTF8PROC_CATEGORY_NL ||
         category == UTF8PROC_CATEGORY_NO;
}

} // namespace

struct PreTokenizer::Stage {
  virtual ~Stage() = default;
  /// Appends the non-empty pieces `piece` splits into.
  virtual Status split(std::string_view piece,
                       std::vector<std::string_view> &out) const = 0;
};

namespace {

/// Digits: each numeric character a match (individual_digits: Isolated;
/// else runs of them: Contiguous).
class DigitsStage : public PreTokenizer::Stage {
public:
  explicit DigitsStage(bool individual) : individual_(individual) {}
  Status split(std::string_view piece,
               std::vector<std::string_view> &out) const override {
    std::vector<Span> spans;
    size_t last = 0;
    for (size_t pos = 0; pos < piece.size();) {
      size_t begin = pos;
      char32_t cp = uint8_t(piece[pos]) < 0x80 ? char32_t(piece[pos++])
                                               : utf8::decode(piece, pos);
      if (!isNumeric(cp))
        continue;
      if (last < begin)
        spans.push_back({last, begin, false});
      spans.push_back({begin, pos, true});
      last = pos;
    }
    if (last < piece.size())
      spans.push_back({last, piece.size(), false});
    applyBehavior(piece, std::move(spans),
                  individual_ ? Behavior::Isolated : Behavior::Contiguous, out);
    return Status::success();
  }

private:
  bool individual_;
};

/// Split: the matches of a regex (a String pattern is the regex of the
/// escaped string, as tokenizers builds it), possibly inverted.
class SplitStage : public PreTokenizer::Stage {
public:
  SplitStage(std::unique_ptr<Regex> regex, Behavior behavior, bool invert)
      : regex_(std::move(regex)), behavior_(behavior), invert_(invert) {}
  Status split(std::string_view piece,
               std::vector<std::string_view> &out) const override {
    std::vector<std::pair<size_t, size_t>> matches;
    if (Status status = regex_->findAll(piece, matches); !status.ok())
      return status;
    std::vector<Span> spans = spansAround(piece.size(), matches);
    if (invert_)
      for (Span &span : spans)
        span.isMatch = !span.isMatch;
    applyBehavior(piece, std::move(spans), behavior_, out);
    return Status::success();
  }

private:
  std::unique_ptr<Regex> regex_;
  Behavior behavior_;
  bool invert_;
};

std::unique_ptr<Regex> compileAt(const JsonNode &at,
                                 std::string_view onigurumaPattern) {
  StatusOr<std::string> pattern = translateOnigurumaPattern(onigurumaPattern);
  if (!pattern.ok())
    at.fail(pattern.status().message());
  StatusOr<std::unique_ptr<Regex>> regex = Regex::compile(*pattern);
  if (!regex.ok())
    at.fail(regex.status().message());
  return std::move(*regex);
}

/// A literal string as a regex matching exactly it.
std::string escapeLiteral(const std::string &literal) {
  std::string escaped;
  for (char c : literal) {
    bool isWordByte = uint8_t(c) >= 0x80 || std::isalnum(uint8_t(c));
    if (!isWordByte)
      escaped += '\\';
    escaped += c;
  }
  return escaped;
}

std::unique_ptr<PreTokenizer::Stage> parseSplit(const JsonNode &node) {
  JsonNode pattern = node.member("pattern");
  std::unique_ptr<Regex> regex;
  if (pattern.value().contains("Regex")) {
    JsonNode text = pattern.member("Regex");
    regex = compileAt(text, text.asString());
  } else {
    JsonNode text = pattern.member("String");
    regex = compileAt(text, escapeLiteral(text.asString()));
  }
  JsonNode behaviorNode = node.member("behavior");
  std::string name = behaviorNode.asString();
  static const std::pair<const char *, Behavior> kBehaviors[] = {
      {"Removed", Behavior::Removed},
      {"Isolated", Behavior::Isolated},
      {"MergedWithPrevious", Behavior::MergedWithPrevious},
      {"MergedWithNext", Behavior::MergedWithNext},
      {"Contiguous", Behavior::Contiguous}};
  for (auto [known, behavior] : kBehaviors)
    if (name == known)
      return std::make_unique<SplitStage>(std::move(regex), behavior,
                                          node.member("invert").asBool());
  behaviorNode.fail("unknown split behavior '" + name + "'");
}

} // namespace

PreTokenizer::PreTokenizer() = default;
PreTokenizer::~PreTokenizer() = default;

std::unique_ptr<PreTokenizer> PreTokenizer::parse(const JsonNode &node) {
  if (node.isNull())
    node.fail("a ByteLevel pre-tokenizer is required (byte-level BPE)");
  // Sequences flattened into their steps, in order.
  std::vector<JsonNode> steps;
  std::vector<JsonNode> pending{node};
  while (!pending.empty()) {
    JsonNode step = pending.back();
    pending.pop_back();
    if (step.type() == "Sequence") {
      std::vector<JsonNode> inner = step.member("pretokenizers").elements();
      pending.insert(pending.end(), inner.rbegin(), inner.rend());
    } else {
      steps.push_back(step);
    }
  }

  std::unique_ptr<PreTokenizer> preTokenizer(new PreTokenizer());
  for (size_t i = 0; i < steps.size(); ++i) {
    const JsonNode &step = steps[i];
    std::string type = step.type();
    if (type == "ByteLevel" && i + 1 == steps.size()) {
      preTokenizer->addPrefixSpace_ = step.member("add_prefix_space").asBool();
      JsonNode useRegex = step.optionalMember("use_regex");
      if (useRegex.isNull() || useRegex.asBool())
        preTokenizer->wordRegex_ = compileAt(step, kGpt2Pattern);
      return preTokenizer;
    }
    if (type == "ByteLevel")
      step.member("type").fail("ByteLevel must be the last pre-tokenizer");
    if (type == "Digits")
      preTokenizer->stages_.push_back(std::make_unique<DigitsStage>(
          step.member("individual_digits").asBool()));
    else if (type == "Split")
      preTokenizer->stages_.push_back(parseSplit(step));
    else
      step.member("type").fail("unsupported pre-tokenizer '" + type + "'");
  }
  node.fail("a ByteLevel pre-tokenizer is required (byte-level BPE)");
}

Status PreTokenizer::split(std::string_view text, Words &words) const {
  std::vector<std::string_view> pieces{text}, next;
  for (const auto &stage : stages_) {
    next.clear();
    for (std::string_view piece : pieces)
      if (Status status = stage->split(piece, next); !status.ok())
        return status;
    pieces.swap(next);
  }
  std::vector<std::pair<size_t, size_t>> matches;
  for (std::string_view piece : pieces) {
    if (piece.empty())
      continue;
    if (addPrefixSpace_ && piece[0] != ' ')
      piece = words.prefixed_.emplace_back(" ").append(piece);
    if (!wordRegex_) {
      words.words_.push_back(piece);
      continue;
    }
    matches.clear();
    if (Status status = wordRegex_->findAll(piece, matches); !status.ok())
      return status;
    // Isolated: the matches and the (non-empty) text between them.
    size_t previous = 0;
    for (auto [begin, end] : matches) {
      if (previous < begin)
        words.words_.push_back(piece.substr(previous, begin - previous));
      if (begin < end)
        words.words_.push_back(piece.substr(begin, end - begin));
      previous = end;
    }
    if (previous < piece.size())
      words.words_.push_back(piece.substr(previous));
  }
  return Status::success();
}

} // namespace cohere2c::text
