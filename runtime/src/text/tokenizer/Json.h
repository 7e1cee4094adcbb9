//===- Json.h - Reading tokenizer.json fields with their JSON paths -------===//
//
// Every error of parse() names the file and the JSON pointer of the value at
// fault ("tokenizer.json: /model/merges/12: ..."). A JsonNode is a value of
// the parsed document together with that path, so the component parsers read
// fields and report errors without carrying the path themselves.
//
// Parsing is the one place the tokenizer throws: a JsonNode accessor that
// finds a missing or mistyped field throws TokenizerJsonError, which
// Tokenizer::parse() turns into a Status. Nothing throws after parse().
//
//===----------------------------------------------------------------------===//
#ifndef COHERE2C_TEXT_TOKENIZER_JSON_H
#define COHERE2C_TEXT_TOKENIZER_JSON_H

#include <nlohmann/json.hpp>

#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>

namespace cohere2c::text {

/// A tokenizer.json that cannot be used; what() is the whole message.
class TokenizerJsonError : public std::runtime_error {
public:
  using std::runtime_error::runtime_error;
};

class JsonNode {
public:
  /// The document root of the file called `source`.
  JsonNode(const nlohmann::json &root, const std::string &source)
      : value_(&root), source_(&source) {}

  const nlohmann::json &value() const { return *value_; }
  /// The JSON pointer of this value ("" for the root).
  const std::string &path() const { return path_; }
  bool isNull() const { return value_->is_null(); }

  /// The member `key` of this object. Throws if this is not an object or the
  /// member is missing.
  JsonNode member(std::string_view key) const;
  /// The member `key`, or a null node where it is missing (a serde default).
  JsonNode optionalMember(std::string_view key) const;
  /// The elements of this array, in order. Throws if this is not an array.
  std::vector<JsonNode> elements() const;
  /// Element `index` of this array, which the caller knows exists (for
  /// naming a value of an array it walks itself, as large vocabs are).
  JsonNode element(size_t index) const {
    return child(value_->at(index), std::to_string(index));
  }

  /// This value as a string, bool or integer in [min, max]; throws if it has
  /// another type or is out of range.
  std::string asString() const;
  bool asBool() const;
  int64_t asInt(int64_t min, int64_t max) const;

  /// The "type" member of this object (the tag of tokenizers' components).
  std::string type() const { return member("type").asString(); }

  /// Throws "<source>: <path>: <what>".
  [[noreturn]] void fail(const std::string &what) const;

private:
  JsonNode(const nlohmann::json &value, const std::string &source,
           std::string path)
      : value_(&value), source_(&source), path_(std::move(path)) {}
  JsonNode child(const nlohmann::json &value, std::string_view step) const;
  void expect(bool ok, const char *expected) const;

  const nlohmann::json *value_;
  const std::string *source_;
  std::string path_;
};

} // namespace cohere2c::text

#endif // COHERE2C_TEXT_TOKENIZER_JSON_H
