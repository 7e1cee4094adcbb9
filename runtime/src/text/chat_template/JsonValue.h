//===- JsonValue.h - JSON to template values and back (tojson) ------------===//
//
// fromJson gives the values Python's json.loads would: objects keep their key
// order when the JSON type does (nlohmann::ordered_json), integers stay ints,
// 1.0 stays a float.
//
// toJson is transformers' replacement of jinja2's tojson filter:
//   json.dumps(x, ensure_ascii=False, indent=indent, separators=separators,
//              sort_keys=sort_keys)
// with Python's defaults: separators ', ' and ': ' without indent, ',' and
// ': ' with one; floats as their repr; NaN, Infinity; non-ASCII kept unless
// ensure_ascii; control characters as \u00XX.
//
//===----------------------------------------------------------------------===//
#ifndef COHERE2C_TEXT_CHAT_TEMPLATE_JSONVALUE_H
#define COHERE2C_TEXT_CHAT_TEMPLATE_JSONVALUE_H

#include "text/chat_template/Value.h"

#include <nlohmann/json.hpp>

#include <optional>
#include <string>

namespace cohere2c::text::jinja {

/// Throws a TemplateError for JSON nested deeper than kMaxNesting or binary
/// values.
Value fromJson(const nlohmann::ordered_json &json);
Value fromJson(const nlohmann::json &json);

struct JsonOptions {
  bool ensureAscii = false;
  /// The indent string; nullopt is Python's indent=None (one line).
  std::optional<std::string> indent;
  /// Python's separators=(item, key); nullopt picks Python's default.
  std::optional<std::pair<std::string, std::string>> separators;
  bool sortKeys = false;
};

/// json.dumps(value, ...): throws a TemplateError ("Object of type Undefined
/// is not JSON serializable") for values JSON cannot hold.
std::string toJson(const Value &value, const JsonOptions &options);

} // namespace cohere2c::text::jinja

#endif // COHERE2C_TEXT_CHAT_TEMPLATE_JSONVALUE_H
