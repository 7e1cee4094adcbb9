//===- Json.cpp - Reading tokenizer.json fields with their JSON paths -----===//
//
// JSON pointers as RFC 6901 writes them: '~' is escaped as "~0", '/' as "~1".
//
//===----------------------------------------------------------------------===//
#include "text/tokenizer/Json.h"

#include "Support/Json.h"

namespace cohere2c::text {

namespace {

std::string escapePointerStep(std::string_view step) {
  std::string escaped;
  for (char c : step) {
    if (c == '~')
      escaped += "~0";
    else if (c == '/')
      escaped += "~1";
    else
      escaped += c;
  }
  return escaped;
}

const char *typeName(const nlohmann::json &value) {
  return value.is_number_integer() ? "integer" : value.type_name();
}

} // namespace

JsonNode JsonNode::child(const nlohmann::json &value,
                         std::string_view step) const {
  return JsonNode(value, *source_, path_ + "/" + escapePointerStep(step));
}

void JsonNode::fail(const std::string &what) const {
  throw TokenizerJsonError(*source_ + ": " + (path_.empty() ? "/" : path_) +
                           ": " + what);
}

void JsonNode::expect(bool ok, const char *expected) const {
  if (!ok)
    fail(std::string("expected ") + expected + ", found " + typeName(*value_));
}

JsonNode JsonNode::member(std::string_view key) const {
  expect(value_->is_object(), "an object");
  auto it = value_->find(key);
  if (it == value_->end())
    fail("missing field '" + std::string(key) + "'");
  return child(*it, key);
}

JsonNode JsonNode::optionalMember(std::string_view key) const {
  static const nlohmann::json null;
  expect(value_->is_object(), "an object");
  auto it = value_->find(key);
  return child(it == value_->end() ? null : *it, key);
}

std::vector<JsonNode> JsonNode::elements() const {
  expect(value_->is_array(), "an array");
  std::vector<JsonNode> nodes;
  nodes.reserve(value_->size());
  for (size_t i = 0; i < value_->size(); ++i)
    nodes.push_back(child((*value_)[i], std::to_string(i)));
  return nodes;
}

std::string JsonNode::asString() const {
  expect(value_->is_string(), "a string");
  return value_->get<std::string>();
}

bool JsonNode::asBool() const {
  expect(value_->is_boolean(), "a boolean");
  return value_->get<bool>();
}

int64_t JsonNode::asInt(int64_t min, int64_t max) const {
  expect(value_->is_number_integer(), "an integer");
  bool inRange;
  if (value_->is_number_unsigned()) {
    uint64_t u = value_->get<uint64_t>();
    inRange = u <= uint64_t(max) && (min <= 0 || u >= uint64_t(min));
  } else {
    int64_t i = value_->get<int64_t>();
    inRange = i >= min && i <= max;
  }
  if (!inRange)
    fail("expected an integer in [" + std::to_string(min) + ", " +
         std::to_string(max) + "], found " + jsonExcerpt(*value_));
  return value_->get<int64_t>();
}

} // namespace cohere2c::text
