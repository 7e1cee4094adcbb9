//===- JsonValue.cpp - JSON to template values and back (tojson) ----------===//
#include "text/chat_template/JsonValue.h"

#include "text/chat_template/Error.h"
#include "text/chat_template/Operators.h"
#include "text/chat_template/Unicode.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>

namespace cohere2c::text::jinja {

namespace {

template <typename Json> Value fromJsonAt(const Json &json, unsigned depth) {
  if (depth > kMaxNesting)
    throw TemplateError("the context nests deeper than " +
                        std::to_string(kMaxNesting) + " levels");
  switch (json.type()) {
  case nlohmann::json::value_t::null:
    return Value::none();
  case nlohmann::json::value_t::boolean:
    return Value::boolean(json.template get<bool>());
  case nlohmann::json::value_t::number_integer:
    return Value::integer(json.template get<int64_t>());
  case nlohmann::json::value_t::number_unsigned: {
    auto u = json.template get<uint64_t>();
    if (u > static_cast<uint64_t>(std::numeric_limits<int64_t>::max()))
      throw TemplateError("the context holds an integer beyond 64 bits: " +
                          std::to_string(u));
    return Value::integer(static_cast<int64_t>(u));
  }
  case nlohmann::json::value_t::number_float:
    return Value::real(json.template get<double>());
  case nlohmann::json::value_t::string:
    return Value::string(json.template get<std::string>());
  case nlohmann::json::value_t::array: {
    std::vector<Value> items;
    items.reserve(json.size());
    for (const Json &item : json)
      items.push_back(fromJsonAt(item, depth + 1));
    return Value::list(std::move(items));
  }
  case nlohmann::json::value_t::object: {
    Dict dict;
    for (auto it = json.begin(); it != json.end(); ++it)
      dict.set(Value::string(it.key()), fromJsonAt(it.value(), depth + 1));
    return Value::dict(std::move(dict));
  }
  default:
    throw TemplateError("the context holds a JSON value of type " +
                        std::string(json.type_name()) +
                        ", which templates cannot use");
  }
}

void appendJsonString(std::string &out, const std::string &s,
                      bool ensureAscii) {
  out.push_back('"');
  char buf[8];
  for (char32_t c : decodeUtf8(s)) {
    switch (c) {
    case '"':
      out += "\\\"";
      continue;
    case '\\':
      out += "\\\\";
      continue;
    case '\n':
      out += "\\n";
      continue;
    case '\r':
      out += "\\r";
      continue;
    case '\t':
      out += "\\t";
      continue;
    case '\b':
      out += "\\b";
      continue;
    case '\f':
      out += "\\f";
      continue;
    default:
      break;
    }
    bool escape = c < 0x20 || (ensureAscii && c > 0x7E);
    if (!escape) {
      appendUtf8(out, c);
    } else if (c > 0xFFFF) {
      char32_t v = c - 0x10000;
      std::snprintf(buf, sizeof buf, "\\u%04x",
                    static_cast<unsigned>(0xD800 | (v >> 10)));
      out += buf;
      std::snprintf(buf, sizeof buf, "\\u%04x",
                    static_cast<unsigned>(0xDC00 | (v & 0x3FF)));
      out += buf;
    } else {
      std::snprintf(buf, sizeof buf, "\\u%04x", static_cast<unsigned>(c));
      out += buf;
    }
  }
  out.push_back('"');
}

std::string jsonFloat(double d) {
  if (std::isnan(d))
    return "NaN";
  if (std::isinf(d))
    return d > 0 ? "Infinity" : "-Infinity";
  return formatFloat(d);
}

/// json.JSONEncoder's iterencode, one container at a time.
class Encoder {
public:
  explicit Encoder(const JsonOptions &options) : options_(options) {
    if (options.separators) {
      itemSeparator_ = options.separators->first;
      keySeparator_ = options.separators->second;
    } else {
      itemSeparator_ = options.indent ? "," : ", ";
      keySeparator_ = ": ";
    }
  }

  void encode(const Value &v, unsigned level);
  std::string out;

private:
  void newline(unsigned level) {
    if (!options_.indent)
      return;
    out.push_back('\n');
    for (unsigned i = 0; i < level; ++i)
      out += *options_.indent;
  }
  void encodeSequence(const std::vector<Value> &items, unsigned level);
  void encodeDict(const Dict &dict, unsigned level);
  std::string keyText(const Value &key);

  const JsonOptions &options_;
  std::string itemSeparator_;
  std::string keySeparator_;
};

void Encoder::encodeSequence(const std::vector<Value> &items, unsigned level) {
  if (items.empty()) {
    out += "[]";
    return;
  }
  out.push_back('[');
  for (size_t i = 0; i < items.size(); ++i) {
    if (i)
      out += itemSeparator_;
    newline(level + 1);
    encode(items[i], level + 1);
    checkStringSize(out.size());
  }
  newline(level);
  out.push_back(']');
}

std::string Encoder::keyText(const Value &key) {
  switch (key.kind()) {
  case Value::Kind::String:
    return key.asString();
  case Value::Kind::Float:
    return jsonFloat(key.asDouble());
  case Value::Kind::Bool:
    return key.asBool() ? "true" : "false";
  case Value::Kind::None:
    return "null";
  case Value::Kind::Int:
    return std::to_string(key.asInt());
  default:
    throw TemplateError("keys must be str, int, float, bool or None, not " +
                        typeName(key));
  }
}

void Encoder::encodeDict(const Dict &dict, unsigned level) {
  if (dict.empty()) {
    out += "{}";
    return;
  }
  std::vector<const Dict::Entry *> entries;
  for (const Dict::Entry &entry : dict.entries())
    entries.push_back(&entry);
  if (options_.sortKeys)
    std::stable_sort(entries.begin(), entries.end(),
                     [](const Dict::Entry *a, const Dict::Entry *b) {
                       return lessThan(a->first, b->first);
                     });
  out.push_back('{');
  for (size_t i = 0; i < entries.size(); ++i) {
    if (i)
      out += itemSeparator_;
    newline(level + 1);
    appendJsonString(out, keyText(entries[i]->first), options_.ensureAscii);
    out += keySeparator_;
    encode(entries[i]->second, level + 1);
    checkStringSize(out.size());
  }
  newline(level);
  out.push_back('}');
}

void Encoder::encode(const Value &v, unsigned level) {
  switch (v.kind()) {
  case Value::Kind::None:
    out += "null";
    return;
  case Value::Kind::Bool:
    out += v.asBool() ? "true" : "false";
    return;
  case Value::Kind::Int:
    out += std::to_string(v.asInt());
    return;
  case Value::Kind::Float:
    out += jsonFloat(v.asDouble());
    return;
  case Value::Kind::String:
    appendJsonString(out, v.asString(), options_.ensureAscii);
    return;
  case Value::Kind::List:
  case Value::Kind::Tuple:
    encodeSequence(v.items(), level);
    return;
  case Value::Kind::Dict:
    encodeDict(v.asDict(), level);
    return;
  default:
    throw TemplateError("Object of type " + typeName(v) +
                        " is not JSON serializable");
  }
}

} // namespace

Value fromJson(const nlohmann::ordered_json &json) {
  return fromJsonAt(json, 0);
}

Value fromJson(const nlohmann::json &json) { return fromJsonAt(json, 0); }

std::string toJson(const Value &value, const JsonOptions &options) {
  Encoder encoder(options);
  encoder.encode(value, 0);
  return std::move(encoder.out);
}

} // namespace cohere2c::text::jinja
