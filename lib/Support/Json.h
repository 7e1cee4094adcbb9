//===- Json.h - Parsing JSON from outside input, bounded ------------------===//
//
// Every JSON document read from outside goes through parseJson(): config.json,
// safetensors headers, shard indexes, manifests, request and perplexity
// lines, tokenizer files, HTTP bodies. nlohmann::json parses and destroys a
// document without recursion, but its serializer (dump()), comparisons and
// copies recurse once per level of nesting: a 200 KB file of 100,000 nested
// brackets overflows the stack the first time a message quotes it. So
// parseJson() refuses a document nested deeper than kMaxJsonDepth before
// nlohmann reads it, and every value it returns is safe to dump, compare and
// copy.
//
// Messages quote values with jsonExcerpt(), which keeps them to a line even
// when the value is a 100,000-digit number or a megabyte string.
//
// Header-only: callers use both nlohmann::json and nlohmann::ordered_json,
// and lib/ is linked into code built without exceptions, so nothing here
// throws.
//
//===----------------------------------------------------------------------===//
#ifndef COHERE2C_SUPPORT_JSON_H
#define COHERE2C_SUPPORT_JSON_H

#include "Support/Status.h"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

namespace cohere2c {

/// The deepest nesting of arrays and objects accepted (the document's own
/// array or object is level 1). Real inputs nest a few levels: config.json
/// 2 (an FP8 checkpoint's quantization_config 5), a safetensors header 3,
/// tokenizer.json 5, a manifest 6, the chats of the tests with tools 10; a
/// chat whose tools have nested JSON schemas maybe 20. 64 leaves room for
/// deep tool schemas while a recursion of 64 frames stays far from any
/// stack's end.
constexpr int kMaxJsonDepth = 64;

/// How much of a value a message quotes, in bytes.
constexpr size_t kMaxQuotedBytes = 80;

/// `text` cut to at most `maxBytes` bytes plus "..." where longer, at a
/// UTF-8 character boundary (a message may be sent on as JSON, which must
/// stay valid UTF-8).
inline std::string excerpt(std::string_view text,
                           size_t maxBytes = kMaxQuotedBytes) {
  if (text.size() <= maxBytes)
    return std::string(text);
  size_t end = maxBytes;
  while (end > 0 && (static_cast<unsigned char>(text[end]) & 0xC0) == 0x80)
    --end; // text[end] continues a character: cut before that character
  return std::string(text.substr(0, end)) + "...";
}

/// `value` as JSON text for a message, cut as excerpt() cuts. Strings that
/// are not valid UTF-8 are quoted with U+FFFD rather than failing.
template <typename Json>
std::string jsonExcerpt(const Json &value, size_t maxBytes = kMaxQuotedBytes) {
  return excerpt(value.dump(-1, ' ', false, Json::error_handler_t::replace),
                 maxBytes);
}

/// The offset of the first '[' or '{' of `text` that opens a level deeper
/// than `maxDepth`, counting brackets outside strings; npos when none does.
/// For valid JSON this is the document's nesting exactly; for invalid JSON
/// the parser reports the error.
inline size_t findNestingBeyond(std::string_view text, int maxDepth) {
  int depth = 0;
  bool inString = false;
  for (size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (inString) {
      if (c == '\\')
        ++i; // the escaped character cannot end the string
      else if (c == '"')
        inString = false;
    } else if (c == '"') {
      inString = true;
    } else if (c == '[' || c == '{') {
      if (++depth > maxDepth)
        return i;
    } else if (c == ']' || c == '}') {
      --depth;
    }
  }
  return std::string_view::npos;
}

/// A key given twice in one object: its JSON pointer and the key.
struct DuplicateKey {
  std::string pointer;
  std::string key;
};

namespace detail {

/// Accepts every event and keeps the first parse error's message, as the
/// parser words it without its "[json.exception...]" prefix, and with at
/// most kMaxQuotedBytes of the token it last read (a 100,000-digit number
/// that ends badly would be quoted whole).
struct JsonErrorRecorder : nlohmann::json_sax<nlohmann::json> {
  std::string message = "not valid JSON";
  bool null() override { return true; }
  bool boolean(bool) override { return true; }
  bool number_integer(number_integer_t) override { return true; }
  bool number_unsigned(number_unsigned_t) override { return true; }
  bool number_float(number_float_t, const string_t &) override { return true; }
  bool string(string_t &) override { return true; }
  bool binary(binary_t &) override { return true; }
  bool start_object(std::size_t) override { return true; }
  bool key(string_t &) override { return true; }
  bool end_object() override { return true; }
  bool start_array(std::size_t) override { return true; }
  bool end_array() override { return true; }
  bool parse_error(std::size_t, const std::string &,
                   const nlohmann::detail::exception &e) override {
    std::string what = e.what();
    size_t at = what.find("] ");
    what = at == std::string::npos ? what : what.substr(at + 2);
    const std::string lastRead = "last read: '";
    size_t token = what.find(lastRead);
    if (token != std::string::npos) {
      token += lastRead.size();
      std::string quoted = excerpt(std::string_view(what).substr(token));
      what = what.substr(0, token) + quoted;
    }
    message = "not valid JSON: " + what;
    return false;
  }
};

/// Finds the first key given twice in one object. The DOM parser keeps the
/// last of them silently, and its callback, which does see each key, makes
/// the parse quadratic (at the end of every object it scans all the members
/// of the object's parent), so this is a SAX pass of its own. It keeps one
/// level per open array or object, never recursing.
class DuplicateKeyFinder : public JsonErrorRecorder {
public:
  bool found = false;
  /// The key found twice and its JSON pointer ("/a/b": key b of the object
  /// at /a).
  DuplicateKey duplicate;

  bool null() override { return value(); }
  bool boolean(bool) override { return value(); }
  bool number_integer(number_integer_t) override { return value(); }
  bool number_unsigned(number_unsigned_t) override { return value(); }
  bool number_float(number_float_t, const string_t &) override {
    return value();
  }
  bool string(string_t &) override { return value(); }
  bool start_object(std::size_t) override { return open(true); }
  bool start_array(std::size_t) override { return open(false); }
  bool end_object() override { return close(); }
  bool end_array() override { return close(); }
  bool key(string_t &name) override {
    Level &level = levels.back();
    level.step = name;
    if (level.keys.insert(name).second)
      return true;
    found = true;
    duplicate = {currentPointer(), name};
    return false; // found: stop reading
  }

private:
  struct Level {
    bool isObject;
    size_t elements = 0; // of an array, so far
    std::string step;    // the pointer's step to the value being read
    std::set<std::string> keys;
  };
  std::vector<Level> levels;

  bool value() {
    if (!levels.empty() && !levels.back().isObject)
      levels.back().step = std::to_string(levels.back().elements++);
    return true;
  }
  bool open(bool isObject) {
    value();
    levels.push_back(Level{isObject});
    return true;
  }
  bool close() {
    levels.pop_back();
    return true;
  }
  /// RFC 6901: '~' is written "~0" and '/' "~1".
  std::string currentPointer() const {
    std::string text;
    for (const Level &level : levels) {
      text += '/';
      for (char c : level.step)
        text += c == '~' ? "~0" : c == '/' ? "~1" : std::string(1, c);
    }
    return text;
  }
};

} // namespace detail

/// A key that `text` gives twice in one object, with the JSON pointer of
/// that key ("/model.norm.weight" for a key of the document's own object);
/// nullopt when every object names each key once. `text` should be valid
/// JSON of bounded nesting (what parseJson() accepted).
inline std::optional<DuplicateKey> findDuplicateKey(std::string_view text) {
  detail::DuplicateKeyFinder finder;
  nlohmann::json::sax_parse(text, &finder);
  if (!finder.found)
    return std::nullopt;
  return finder.duplicate;
}

/// Hugging Face's token-id fields (eos_token_id of config.json and
/// generation_config.json): an id or a list of ids, each in [0, limit);
/// null is no id. `vocabulary` names what limit counts in messages ("the
/// vocabulary"). Errors, without a source: "<field> must be an id or a
/// list of ids, found ...", "<field> 300 is outside <vocabulary> [0, 256)"
/// (an id past the vocabulary is never generated: a request would never
/// stop at it).
template <typename Json>
StatusOr<std::vector<int64_t>>
parseTokenIds(const Json &value, const std::string &field, int64_t limit,
              const std::string &vocabulary) {
  std::vector<int64_t> ids;
  if (value.is_null())
    return ids;
  Json list = value.is_array() ? value : Json::array({value});
  for (const Json &id : list) {
    if (!id.is_number_integer() ||
        (id.is_number_unsigned() &&
         id.template get<uint64_t>() > uint64_t(INT64_MAX)) ||
        id.template get<int64_t>() < 0)
      return Status::error(field + " must be an id or a list of ids, found " +
                           jsonExcerpt(value));
    if (id.template get<int64_t>() >= limit)
      return Status::error(field + " " + id.dump() + " is outside " +
                           vocabulary + " [0, " + std::to_string(limit) + ")");
    ids.push_back(id.template get<int64_t>());
  }
  return ids;
}

/// `text` parsed, or an error starting with `source` (the file, or the file
/// and line; nothing when empty): "<source>: arrays and objects nested more
/// than 64 levels deep (from byte 17)", "<source>: not valid JSON: a NUL
/// byte at byte 9" or "<source>: not valid JSON: parse error at line 2,
/// column 1: ...". Callers check the type of what they get.
template <typename Json = nlohmann::json>
StatusOr<Json> parseJson(std::string_view text, const std::string &source) {
  std::string prefix = source.empty() ? "" : source + ": ";
  size_t tooDeep = findNestingBeyond(text, kMaxJsonDepth);
  if (tooDeep != std::string_view::npos)
    return Status::error(prefix + "arrays and objects nested more than " +
                         std::to_string(kMaxJsonDepth) +
                         " levels deep (from byte " + std::to_string(tooDeep) +
                         ")");
  // nlohmann's lexer takes a NUL byte for the end of the input, and JSON has
  // no place for one (raw, not even in a string).
  if (size_t nul = text.find('\0'); nul != std::string_view::npos)
    return Status::error(prefix + "not valid JSON: a NUL byte at byte " + std::to_string(nul));
  Json value = Json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (!value.is_discarded())
    return value;
  detail::JsonErrorRecorder recorder;
  nlohmann::json::sax_parse(text, &recorder);
  return Status::error(prefix + recorder.message);
}

} // namespace cohere2c

#endif // COHERE2C_SUPPORT_JSON_H
