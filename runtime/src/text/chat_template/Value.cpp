//===- Value.cpp - The values a chat template computes with --------------===//
#include "text/chat_template/Value.h"

#include "text/chat_template/Error.h"
#include "text/chat_template/Loop.h"
#include "text/chat_template/Unicode.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace cohere2c::text::jinja {

namespace {

struct UndefinedInfo {
  std::string hint;
  bool unsafe;
};

struct SequenceData {
  std::vector<Value> items;
  unsigned depth;
};

struct IteratorState {
  std::vector<Value> items;
  size_t next = 0;
  const char *typeName;
};

unsigned nestedDepth(const std::vector<Value> &items) {
  unsigned depth = 0;
  for (const Value &item : items)
    depth = std::max(depth, item.depth());
  if (depth + 1 > kMaxNesting)
    throw TemplateError("values nest deeper than " +
                        std::to_string(kMaxNesting) + " levels");
  return depth + 1;
}

bool isHashable(const Value &v) {
  if (v.kind() == Value::Kind::List || v.kind() == Value::Kind::Dict)
    return false;
  if (v.kind() == Value::Kind::Tuple)
    return std::all_of(v.items().begin(), v.items().end(), isHashable);
  return true;
}

} // namespace

void checkStringSize(size_t bytes) {
  if (bytes > kMaxStringBytes)
    throw TemplateError("a string would exceed " +
                        std::to_string(kMaxStringBytes >> 20) + " MiB");
}

Value Value::undefined(std::string hint, bool unsafe) {
  Value v;
  v.ptr_ =
      std::make_shared<UndefinedInfo>(UndefinedInfo{std::move(hint), unsafe});
  return v;
}

Value Value::none() {
  Value v;
  v.kind_ = Kind::None;
  return v;
}

Value Value::boolean(bool b) {
  Value v;
  v.kind_ = Kind::Bool;
  v.b_ = b;
  return v;
}

Value Value::integer(int64_t i) {
  Value v;
  v.kind_ = Kind::Int;
  v.i_ = i;
  return v;
}

Value Value::real(double d) {
  Value v;
  v.kind_ = Kind::Float;
  v.f_ = d;
  return v;
}

Value Value::string(std::string s) {
  checkStringSize(s.size());
  Value v;
  v.kind_ = Kind::String;
  v.ptr_ = std::make_shared<std::string>(std::move(s));
  return v;
}

Value Value::list(std::vector<Value> items) {
  if (items.size() > kMaxItems)
    throw TemplateError("a list would exceed " + std::to_string(kMaxItems) +
                        " items");
  unsigned depth = nestedDepth(items);
  Value v;
  v.kind_ = Kind::List;
  v.ptr_ =
      std::make_shared<SequenceData>(SequenceData{std::move(items), depth});
  return v;
}

Value Value::tuple(std::vector<Value> items) {
  Value v = list(std::move(items));
  v.kind_ = Kind::Tuple;
  return v;
}

Value Value::iterator(std::vector<Value> items, const char *typeName) {
  Value v;
  v.kind_ = Kind::Iterator;
  v.ptr_ = std::make_shared<IteratorState>(
      IteratorState{std::move(items), 0, typeName});
  return v;
}

Value Value::dict(Dict d) {
  Value v;
  v.kind_ = Kind::Dict;
  v.ptr_ = std::make_shared<Dict>(std::move(d));
  return v;
}

Value Value::ns(std::shared_ptr<Namespace> n) {
  Value v;
  v.kind_ = Kind::Namespace;
  v.ptr_ = std::move(n);
  return v;
}

Value Value::loop(std::shared_ptr<LoopContext> l) {
  Value v;
  v.kind_ = Kind::Loop;
  v.ptr_ = std::move(l);
  return v;
}

Value Value::callable(std::shared_ptr<const Callable> c) {
  Value v;
  v.kind_ = Kind::Callable;
  v.ptr_ = std::const_pointer_cast<Callable>(std::move(c));
  return v;
}

const std::string &Value::asString() const {
  return *static_cast<const std::string *>(ptr_.get());
}

const std::vector<Value> &Value::items() const {
  return static_cast<const SequenceData *>(ptr_.get())->items;
}

const Dict &Value::asDict() const {
  return *static_cast<const Dict *>(ptr_.get());
}

Namespace &Value::asNamespace() const {
  return *static_cast<Namespace *>(ptr_.get());
}

LoopContext &Value::asLoop() const {
  return *static_cast<LoopContext *>(ptr_.get());
}

std::shared_ptr<LoopContext> Value::shareLoop() const {
  return std::static_pointer_cast<LoopContext>(ptr_);
}

const Callable &Value::asCallable() const {
  return *static_cast<const Callable *>(ptr_.get());
}

const std::vector<Value> &Value::iteratorItems() const {
  return static_cast<const IteratorState *>(ptr_.get())->items;
}

size_t Value::iteratorPosition() const {
  return static_cast<const IteratorState *>(ptr_.get())->next;
}

void Value::advanceIterator(size_t n) const {
  auto *state = static_cast<IteratorState *>(ptr_.get());
  state->next = std::min(state->items.size(), state->next + n);
}

const char *Value::iteratorTypeName() const {
  return static_cast<const IteratorState *>(ptr_.get())->typeName;
}

const std::string &Value::undefinedHint() const {
  static const std::string kNoHint;
  return ptr_ ? static_cast<const UndefinedInfo *>(ptr_.get())->hint : kNoHint;
}

bool Value::undefinedIsUnsafe() const {
  return ptr_ && static_cast<const UndefinedInfo *>(ptr_.get())->unsafe;
}

unsigned Value::depth() const {
  if (isSequence())
    return static_cast<const SequenceData *>(ptr_.get())->depth;
  if (kind_ == Kind::Dict)
    return asDict().depth();
  return 0;
}

const Value *Dict::find(std::string_view key) const {
  if (entries_.size() <= kLinearSearchMax) {
    for (const Entry &entry : entries_)
      if (entry.first.isString() && entry.first.asString() == key)
        return &entry.second;
    return nullptr;
  }
  auto it = stringKeys_.find(std::string(key));
  return it == stringKeys_.end() ? nullptr : &entries_[it->second].second;
}

const Value *Dict::find(const Value &key) const {
  if (key.isString())
    return find(key.asString());
  for (const Entry &entry : entries_)
    if (!entry.first.isString() && equals(entry.first, key))
      return &entry.second;
  return nullptr;
}

void Dict::set(Value key, Value value) {
  if (!isHashable(key))
    throw TemplateError("unhashable type: '" + typeName(key) + "'");
  unsigned depth = 1 + std::max(key.depth(), value.depth());
  if (depth > kMaxNesting)
    throw TemplateError("values nest deeper than " +
                        std::to_string(kMaxNesting) + " levels");
  if (const Value *existing = find(key)) {
    // entries_ is ours: find() only returns a const view of it.
    const_cast<Value &>(*existing) = std::move(value);
  } else {
    if (key.isString())
      stringKeys_.emplace(key.asString(), entries_.size());
    entries_.emplace_back(std::move(key), std::move(value));
  }
  depth_ = std::max(depth_, depth);
}

bool truthy(const Value &v) {
  switch (v.kind()) {
  case Value::Kind::Undefined:
  case Value::Kind::None:
    return false;
  case Value::Kind::Bool:
    return v.asBool();
  case Value::Kind::Int:
    return v.asInt() != 0;
  case Value::Kind::Float:
    return v.asDouble() != 0.0;
  case Value::Kind::String:
    return !v.asString().empty();
  case Value::Kind::List:
  case Value::Kind::Tuple:
    return !v.items().empty();
  case Value::Kind::Dict:
    return !v.asDict().empty();
  default:
    return true;
  }
}

std::string typeName(const Value &v) {
  switch (v.kind()) {
  case Value::Kind::Undefined:
    return "Undefined";
  case Value::Kind::None:
    return "NoneType";
  case Value::Kind::Bool:
    return "bool";
  case Value::Kind::Int:
    return "int";
  case Value::Kind::Float:
    return "float";
  case Value::Kind::String:
    return "str";
  case Value::Kind::List:
    return "list";
  case Value::Kind::Tuple:
    return "tuple";
  case Value::Kind::Iterator:
    return v.iteratorTypeName();
  case Value::Kind::Dict:
    return "dict";
  case Value::Kind::Namespace:
    return "Namespace";
  case Value::Kind::Loop:
    return "LoopContext";
  case Value::Kind::Callable:
    return v.asCallable().typeName();
  }
  return "object";
}

std::string formatFloat(double d) {
  if (std::isnan(d))
    return "nan";
  if (std::isinf(d))
    return d > 0 ? "inf" : "-inf";
  if (d == 0)
    return std::signbit(d) ? "-0.0" : "0.0";
  // The shortest precision that reads back exactly gives repr's digits.
  char buf[40];
  for (int precision = 1; precision <= 17; ++precision) {
    std::snprintf(buf, sizeof buf, "%.*e", precision - 1, d);
    if (std::strtod(buf, nullptr) == d)
      break;
  }
  std::string text(buf);
  std::string sign = text[0] == '-' ? "-" : "";
  size_t ePos = text.find('e');
  std::string digits;
  for (size_t i = sign.size(); i < ePos; ++i)
    if (text[i] != '.')
      digits.push_back(text[i]);
  int decimalPoint = std::atoi(text.c_str() + ePos + 1) + 1;
  int numDigits = static_cast<int>(digits.size());
  if (decimalPoint > -4 && decimalPoint <= 16) {
    if (decimalPoint <= 0)
      return sign + "0." + std::string(-decimalPoint, '0') + digits;
    if (decimalPoint >= numDigits)
      return sign + digits + std::string(decimalPoint - numDigits, '0') + ".0";
    return sign + digits.substr(0, decimalPoint) + "." +
           digits.substr(decimalPoint);
  }
  int exponent = decimalPoint - 1;
  char expText[8];
  std::snprintf(expText, sizeof expText, "e%c%02d", exponent < 0 ? '-' : '+',
                std::abs(exponent));
  std::string mantissa = digits.substr(0, 1);
  if (numDigits > 1)
    mantissa += "." + digits.substr(1);
  return sign + mantissa + expText;
}

namespace {

std::string reprString(const std::string &s) {
  std::u32string text = decodeUtf8(s);
  char32_t quote = '\'';
  if (text.find('\'') != std::u32string::npos &&
      text.find('"') == std::u32string::npos)
    quote = '"';
  std::string out(1, static_cast<char>(quote));
  for (char32_t c : text) {
    char buf[12];
    if (c == quote || c == '\\') {
      out.push_back('\\');
      out.push_back(static_cast<char>(c));
    } else if (c == '\t') {
      out += "\\t";
    } else if (c == '\n') {
      out += "\\n";
    } else if (c == '\r') {
      out += "\\r";
    } else if (c < 0x20 || c == 0x7F) {
      std::snprintf(buf, sizeof buf, "\\x%02x", static_cast<unsigned>(c));
      out += buf;
    } else if (c < 0x7F || isPrintable(c)) {
      appendUtf8(out, c);
    } else {
      const char *format = c <= 0xFF     ? "\\x%02x"
                           : c <= 0xFFFF ? "\\u%04x"
                                         : "\\U%08x";
      std::snprintf(buf, sizeof buf, format, static_cast<unsigned>(c));
      out += buf;
    }
  }
  out.push_back(static_cast<char>(quote));
  return out;
}

/// Python's repr of containers: `active` holds the containers being
/// printed, which print as [...] or {...} when met again (a namespace that
/// holds itself), as Python's reprlib guard does.
class Printer {
public:
  std::string repr(const Value &v);
  std::string str(const Value &v) {
    switch (v.kind()) {
    case Value::Kind::Undefined:
      return "";
    case Value::Kind::String:
      return v.asString();
    default:
      return repr(v);
    }
  }

private:
  std::string sequence(const Value &v, const char *open, const char *close);
  std::string dict(const Dict &d);
  void append(std::string &out, const std::string &piece) {
    out += piece;
    checkStringSize(out.size());
  }

  std::vector<const void *> active_;
};

std::string Printer::sequence(const Value &v, const char *open,
                              const char *close) {
  std::string out = open;
  const std::vector<Value> &items = v.items();
  for (size_t i = 0; i < items.size(); ++i)
    append(out, (i ? ", " : "") + repr(items[i]));
  if (v.kind() == Value::Kind::Tuple && items.size() == 1)
    out += ",";
  return out + close;
}

std::string Printer::dict(const Dict &d) {
  if (std::find(active_.begin(), active_.end(), &d) != active_.end())
    return "{...}";
  active_.push_back(&d);
  std::string out = "{";
  bool first = true;
  for (const auto &[key, value] : d.entries()) {
    append(out, (first ? "" : ", ") + repr(key) + ": " + repr(value));
    first = false;
  }
  active_.pop_back();
  return out + "}";
}

std::string Printer::repr(const Value &v) {
  switch (v.kind()) {
  case Value::Kind::Undefined:
    return "Undefined";
  case Value::Kind::None:
    return "None";
  case Value::Kind::Bool:
    return v.asBool() ? "True" : "False";
  case Value::Kind::Int:
    return std::to_string(v.asInt());
  case Value::Kind::Float:
    return formatFloat(v.asDouble());
  case Value::Kind::String:
    return reprString(v.asString());
  case Value::Kind::List:
    return sequence(v, "[", "]");
  case Value::Kind::Tuple:
    return sequence(v, "(", ")");
  case Value::Kind::Dict:
    return dict(v.asDict());
  case Value::Kind::Namespace:
    return "<Namespace " + dict(v.asNamespace().attributes) + ">";
  case Value::Kind::Loop: {
    LoopContext &loop = v.asLoop();
    return "<LoopContext " + std::to_string(loop.index0() + 1) + "/" +
           std::to_string(loop.length()) + ">";
  }
  case Value::Kind::Iterator:
    return std::string("<") + v.iteratorTypeName() + " object>";
  case Value::Kind::Callable:
    return v.asCallable().repr();
  }
  return "";
}

} // namespace

std::string toStr(const Value &v) { return Printer().str(v); }

std::string toRepr(const Value &v) { return Printer().repr(v); }

namespace {

bool sequencesEqual(const std::vector<Value> &a, const std::vector<Value> &b) {
  if (a.size() != b.size())
    return false;
  for (size_t i = 0; i < a.size(); ++i)
    if (!equals(a[i], b[i]))
      return false;
  return true;
}

bool dictsEqual(const Dict &a, const Dict &b) {
  if (a.size() != b.size())
    return false;
  for (const auto &[key, value] : a.entries()) {
    const Value *other = b.find(key);
    if (!other || !equals(value, *other))
      return false;
  }
  return true;
}

} // namespace

bool equals(const Value &a, const Value &b) {
  if (a.isNumber() && b.isNumber()) {
    if (a.isIntegral() && b.isIntegral())
      return a.asInt() == b.asInt();
    return a.asDouble() == b.asDouble();
  }
  if (a.kind() != b.kind())
    return false;
  switch (a.kind()) {
  case Value::Kind::Undefined:
  case Value::Kind::None:
    return true;
  case Value::Kind::String:
    return a.asString() == b.asString();
  case Value::Kind::List:
  case Value::Kind::Tuple:
    return sequencesEqual(a.items(), b.items());
  case Value::Kind::Dict:
    return dictsEqual(a.asDict(), b.asDict());
  default:
    return a.identity() == b.identity();
  }
}

} // namespace cohere2c::text::jinja
