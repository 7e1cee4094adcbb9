//===- Operators.cpp - Python's operators, attribute and item access ------===//
#include "text/chat_template/Operators.h"

#include "text/chat_template/Error.h"
#include "text/chat_template/Format.h"
#include "text/chat_template/Loop.h"
#include "text/chat_template/Methods.h"
#include "text/chat_template/Unicode.h"

#include <cmath>

namespace cohere2c::text::jinja {

namespace {

const char *opSymbol(BinaryOp op) {
  switch (op) {
  case BinaryOp::Add:
    return "+";
  case BinaryOp::Sub:
    return "-";
  case BinaryOp::Mul:
    return "*";
  case BinaryOp::Div:
    return "/";
  case BinaryOp::FloorDiv:
    return "//";
  case BinaryOp::Mod:
    return "%";
  case BinaryOp::Pow:
    return "** or pow()";
  }
  return "?";
}

[[noreturn]] void unsupported(BinaryOp op, const Value &a, const Value &b) {
  throw TemplateError(std::string("unsupported operand type(s) for ") +
                      opSymbol(op) + ": '" + typeName(a) + "' and '" +
                      typeName(b) + "'");
}

/// jinja2's object_type_repr: "dict object", "None".
std::string objectTypeRepr(const Value &v) {
  return v.isNone() ? "None" : typeName(v) + " object";
}

int64_t floorDiv(int64_t a, int64_t b) {
  if (b == -1 && a == INT64_MIN)
    throw TemplateError("integer overflow (Python ints are unbounded, these "
                        "are 64-bit)");
  int64_t q = a / b;
  if ((a % b != 0) && ((a < 0) != (b < 0)))
    --q;
  return q;
}

int64_t floorMod(int64_t a, int64_t b) {
  if (b == -1)
    return 0;
  int64_t r = a % b;
  if (r != 0 && ((r < 0) != (b < 0)))
    r += b;
  return r;
}

/// CPython's float_divmod: Python's // and % on floats.
std::pair<double, double> floatDivMod(double a, double b) {
  double mod = std::fmod(a, b);
  double div = (a - mod) / b;
  if (mod != 0) {
    if ((b < 0) != (mod < 0)) {
      mod += b;
      div -= 1.0;
    }
  } else {
    mod = std::copysign(0.0, b);
  }
  double floorDiv;
  if (div != 0) {
    floorDiv = std::floor(div);
    if (div - floorDiv > 0.5)
      floorDiv += 1.0;
  } else {
    floorDiv = std::copysign(0.0, a / b);
  }
  return {floorDiv, mod};
}

Value intPow(int64_t base, int64_t exponent) {
  if (exponent < 0)
    return Value::real(
        std::pow(static_cast<double>(base), static_cast<double>(exponent)));
  int64_t result = 1;
  while (exponent > 0) {
    if (exponent & 1)
      result = checkedMul(result, base);
    exponent >>= 1;
    if (exponent > 0)
      base = checkedMul(base, base);
  }
  return Value::integer(result);
}

Value numberOp(BinaryOp op, const Value &a, const Value &b) {
  if (a.isIntegral() && b.isIntegral()) {
    int64_t x = a.asInt(), y = b.asInt();
    switch (op) {
    case BinaryOp::Add:
      return Value::integer(checkedAdd(x, y));
    case BinaryOp::Sub:
      if (y == INT64_MIN)
        throw TemplateError("integer overflow (Python ints are unbounded, "
                            "these are 64-bit)");
      return Value::integer(checkedAdd(x, -y));
    case BinaryOp::Mul:
      return Value::integer(checkedMul(x, y));
    case BinaryOp::Div:
      if (y == 0)
        throw TemplateError("division by zero");
      return Value::real(static_cast<double>(x) / static_cast<double>(y));
    case BinaryOp::FloorDiv:
    case BinaryOp::Mod:
      if (y == 0)
        throw TemplateError("integer division or modulo by zero");
      return Value::integer(op == BinaryOp::Mod ? floorMod(x, y)
                                                : floorDiv(x, y));
    case BinaryOp::Pow:
      return intPow(x, y);
    }
  }
  double x = a.asDouble(), y = b.asDouble();
  switch (op) {
  case BinaryOp::Add:
    return Value::real(x + y);
  case BinaryOp::Sub:
    return Value::real(x - y);
  case BinaryOp::Mul:
    return Value::real(x * y);
  case BinaryOp::Div:
    if (y == 0)
      throw TemplateError("float division by zero");
    return Value::real(x / y);
  case BinaryOp::FloorDiv:
  case BinaryOp::Mod: {
    if (y == 0)
      throw TemplateError(op == BinaryOp::Mod ? "float modulo"
                                              : "float floor division by zero");
    auto [div, mod] = floatDivMod(x, y);
    return Value::real(op == BinaryOp::Mod ? mod : div);
  }
  case BinaryOp::Pow:
    if (x == 0 && y < 0)
      throw TemplateError("0.0 cannot be raised to a negative power");
    if (x < 0 && y != std::floor(y))
      throw TemplateError("complex results are not supported");
    return Value::real(std::pow(x, y));
  }
  return Value();
}

Value repeat(const Value &sequence, int64_t times) {
  if (times < 0)
    times = 0;
  if (sequence.isString()) {
    const std::string &s = sequence.asString();
    if (!s.empty() && static_cast<uint64_t>(times) > kMaxStringBytes / s.size())
      checkStringSize(kMaxStringBytes + 1);
    std::string out;
    out.reserve(s.size() * static_cast<size_t>(times));
    for (int64_t i = 0; i < times; ++i)
      out += s;
    return Value::string(std::move(out));
  }
  const std::vector<Value> &items = sequence.items();
  if (!items.empty() && static_cast<uint64_t>(times) > kMaxItems / items.size())
    throw TemplateError("a list would exceed " + std::to_string(kMaxItems) +
                        " items");
  std::vector<Value> out;
  for (int64_t i = 0; i < times; ++i)
    out.insert(out.end(), items.begin(), items.end());
  return sequence.kind() == Value::Kind::Tuple ? Value::tuple(std::move(out))
                                               : Value::list(std::move(out));
}

Value concatenate(const Value &a, const Value &b) {
  if (a.isString()) {
    if (!b.isString())
      throw TemplateError("can only concatenate str (not \"" + typeName(b) +
                          "\") to str");
    checkStringSize(a.asString().size() + b.asString().size());
    return Value::string(a.asString() + b.asString());
  }
  if (a.kind() != b.kind())
    throw TemplateError("can only concatenate " + typeName(a) + " (not \"" +
                        typeName(b) + "\") to " + typeName(a));
  std::vector<Value> items = a.items();
  items.insert(items.end(), b.items().begin(), b.items().end());
  return a.kind() == Value::Kind::Tuple ? Value::tuple(std::move(items))
                                        : Value::list(std::move(items));
}

/// Python's rich comparison of two lists or tuples: the first differing
/// items decide, else the lengths.
bool compareSequences(CompareOp op, const std::vector<Value> &a,
                      const std::vector<Value> &b) {
  size_t n = std::min(a.size(), b.size());
  for (size_t i = 0; i < n; ++i)
    if (!equals(a[i], b[i]))
      return compare(op, a[i], b[i]);
  return compare(op, Value::integer(static_cast<int64_t>(a.size())),
                 Value::integer(static_cast<int64_t>(b.size())));
}

const char *compareSymbol(CompareOp op) {
  switch (op) {
  case CompareOp::Lt:
    return "<";
  case CompareOp::Le:
    return "<=";
  case CompareOp::Gt:
    return ">";
  default:
    return ">=";
  }
}

template <typename T> bool ordered(CompareOp op, const T &a, const T &b) {
  switch (op) {
  case CompareOp::Lt:
    return a < b;
  case CompareOp::Le:
    return a <= b;
  case CompareOp::Gt:
    return a > b;
  default:
    return a >= b;
  }
}

int64_t normalizeIndex(int64_t index, int64_t size) {
  return index < 0 ? index + size : index;
}

Value itemOfSequence(const Value &object, const Value &key) {
  if (!key.isIntegral())
    return Value();
  if (object.isString()) {
    std::u32string text = decodeUtf8(object.asString());
    int64_t size = static_cast<int64_t>(text.size());
    int64_t i = normalizeIndex(key.asInt(), size);
    if (i < 0 || i >= size)
      return Value();
    return Value::string(encodeUtf8(text.substr(static_cast<size_t>(i), 1)));
  }
  const std::vector<Value> &items = object.items();
  int64_t size = static_cast<int64_t>(items.size());
  int64_t i = normalizeIndex(key.asInt(), size);
  if (i < 0 || i >= size)
    return Value();
  return items[static_cast<size_t>(i)];
}

/// The indices a slice visits (PySlice_AdjustIndices).
std::vector<size_t> sliceIndices(int64_t size, const Value &startValue,
                                 const Value &stopValue,
                                 const Value &stepValue) {
  auto part = [](const Value &v) -> std::optional<int64_t> {
    if (v.isNone() || v.isUndefined())
      return std::nullopt;
    if (!v.isIntegral())
      throw TemplateError(
          "slice indices must be integers or None or have an __index__ method");
    return v.asInt();
  };
  int64_t step = part(stepValue).value_or(1);
  if (step == 0)
    throw TemplateError("slice step cannot be zero");
  auto adjust = [&](std::optional<int64_t> index, int64_t fallback) {
    if (!index)
      return fallback;
    int64_t i = *index < 0 ? *index + size : *index;
    if (i < 0)
      return step < 0 ? int64_t(-1) : int64_t(0);
    if (i >= size)
      return step < 0 ? size - 1 : size;
    return i;
  };
  int64_t start = adjust(part(startValue), step < 0 ? size - 1 : 0);
  int64_t stop = adjust(part(stopValue), step < 0 ? -1 : size);
  std::vector<size_t> indices;
  for (int64_t i = start; step > 0 ? i < stop : i > stop; i += step)
    indices.push_back(static_cast<size_t>(i));
  return indices;
}

} // namespace

int64_t checkedAdd(int64_t a, int64_t b) {
  int64_t r;
  if (__builtin_add_overflow(a, b, &r))
    throw TemplateError("integer overflow (Python ints are unbounded, these "
                        "are 64-bit)");
  return r;
}

int64_t checkedMul(int64_t a, int64_t b) {
  int64_t r;
  if (__builtin_mul_overflow(a, b, &r))
    throw TemplateError("integer overflow (Python ints are unbounded, these "
                        "are 64-bit)");
  return r;
}

void failUndefined(const Value &undefined) {
  const std::string &hint = undefined.undefinedHint();
  throw TemplateError(hint.empty() ? "an undefined value was used" : hint);
}

Value undefinedName(const std::string &name) {
  return Value::undefined("'" + name + "' is undefined");
}

Value undefinedAttribute(const Value &object, const std::string &name) {
  return Value::undefined("'" + objectTypeRepr(object) +
                          "' has no attribute '" + name + "'");
}

Value undefinedElement(const Value &object, const Value &key) {
  if (key.isString())
    return undefinedAttribute(object, key.asString());
  return Value::undefined(objectTypeRepr(object) + " has no element " +
                          toRepr(key));
}

Value binaryOp(BinaryOp op, const Value &a, const Value &b) {
  if (a.isUndefined())
    failUndefined(a);
  if (b.isUndefined())
    failUndefined(b);
  if (a.isNumber() && b.isNumber())
    return numberOp(op, a, b);
  bool aSeq = a.isString() || a.isSequence();
  bool bSeq = b.isString() || b.isSequence();
  if (op == BinaryOp::Add && aSeq)
    return concatenate(a, b);
  if (op == BinaryOp::Mul && aSeq && b.isIntegral())
    return repeat(a, b.asInt());
  if (op == BinaryOp::Mul && bSeq && a.isIntegral())
    return repeat(b, a.asInt());
  if (op == BinaryOp::Mod && a.isString())
    return Value::string(percentFormat(a.asString(), b));
  unsupported(op, a, b);
}

Value negate(const Value &v) {
  if (v.isUndefined())
    failUndefined(v);
  if (v.isIntegral())
    return Value::integer(checkedMul(v.asInt(), -1));
  if (v.kind() == Value::Kind::Float)
    return Value::real(-v.asDouble());
  throw TemplateError("bad operand type for unary -: '" + typeName(v) + "'");
}

Value unaryPlus(const Value &v) {
  if (v.isUndefined())
    failUndefined(v);
  if (v.isIntegral())
    return Value::integer(v.asInt());
  if (v.kind() == Value::Kind::Float)
    return v;
  throw TemplateError("bad operand type for unary +: '" + typeName(v) + "'");
}

bool compare(CompareOp op, const Value &a, const Value &b) {
  switch (op) {
  case CompareOp::Eq:
    return equals(a, b);
  case CompareOp::Ne:
    return !equals(a, b);
  case CompareOp::In:
    return contains(b, a);
  case CompareOp::NotIn:
    return !contains(b, a);
  default:
    break;
  }
  if (a.isUndefined())
    failUndefined(a);
  if (b.isUndefined())
    failUndefined(b);
  if (a.isNumber() && b.isNumber()) {
    if (a.isIntegral() && b.isIntegral())
      return ordered(op, a.asInt(), b.asInt());
    return ordered(op, a.asDouble(), b.asDouble());
  }
  if (a.isString() && b.isString())
    return ordered(op, a.asString(), b.asString());
  if (a.isSequence() && a.kind() == b.kind())
    return compareSequences(op, a.items(), b.items());
  throw TemplateError(std::string("'") + compareSymbol(op) +
                      "' not supported between instances of '" + typeName(a) +
                      "' and '" + typeName(b) + "'");
}

bool lessThan(const Value &a, const Value &b) {
  return compare(CompareOp::Lt, a, b);
}

bool contains(const Value &container, const Value &item) {
  switch (container.kind()) {
  case Value::Kind::Undefined:
    return false;
  case Value::Kind::String:
    if (!item.isString())
      throw TemplateError(
          "'in <string>' requires string as left operand, not " +
          typeName(item));
    return container.asString().find(item.asString()) != std::string::npos;
  case Value::Kind::List:
  case Value::Kind::Tuple:
    for (const Value &element : container.items())
      if (equals(element, item))
        return true;
    return false;
  case Value::Kind::Dict:
    if (item.kind() == Value::Kind::List || item.kind() == Value::Kind::Dict)
      throw TemplateError("unhashable type: '" + typeName(item) + "'");
    return container.asDict().find(item) != nullptr;
  case Value::Kind::Iterator: {
    const std::vector<Value> &items = container.iteratorItems();
    for (size_t i = container.iteratorPosition(); i < items.size(); ++i) {
      if (equals(items[i], item)) {
        container.advanceIterator(i + 1 - container.iteratorPosition());
        return true;
      }
    }
    container.advanceIterator(items.size());
    return false;
  }
  default:
    throw TemplateError("argument of type '" + typeName(container) +
                        "' is not iterable");
  }
}

Value getAttribute(const Value &object, const std::string &name) {
  switch (object.kind()) {
  case Value::Kind::Undefined:
    failUndefined(object);
  case Value::Kind::Namespace: {
    const Value *value = object.asNamespace().attributes.find(name);
    return value ? *value : undefinedAttribute(object, name);
  }
  case Value::Kind::Loop:
    return LoopContext::attribute(object, name);
  default:
    break;
  }
  switch (lookupMethod(object, name)) {
  case MethodKind::Safe:
    return boundMethod(object, name);
  case MethodKind::Unsafe:
    return Value::undefined("access to attribute '" + name + "' of '" +
                                typeName(object) + "' object is unsafe.",
                            /*unsafe=*/true);
  case MethodKind::None:
    break;
  }
  if (object.kind() == Value::Kind::Dict)
    if (const Value *value = object.asDict().find(name))
      return *value;
  return undefinedAttribute(object, name);
}

Value getItem(const Value &object, const Value &key) {
  switch (object.kind()) {
  case Value::Kind::Undefined:
    failUndefined(object);
  case Value::Kind::Dict:
    if (key.kind() != Value::Kind::List && key.kind() != Value::Kind::Dict)
      if (const Value *value = object.asDict().find(key))
        return *value;
    break;
  case Value::Kind::String:
  case Value::Kind::List:
  case Value::Kind::Tuple: {
    Value item = itemOfSequence(object, key);
    if (!item.isUndefined())
      return item;
    break;
  }
  default:
    break;
  }
  if (key.isString())
    return getAttribute(object, key.asString());
  return undefinedElement(object, key);
}

Value getSlice(const Value &object, const Value &start, const Value &stop,
               const Value &step) {
  if (object.isUndefined())
    failUndefined(object);
  if (object.isString()) {
    std::u32string text = decodeUtf8(object.asString());
    std::u32string out;
    for (size_t i :
         sliceIndices(static_cast<int64_t>(text.size()), start, stop, step))
      out.push_back(text[i]);
    return Value::string(encodeUtf8(out));
  }
  if (!object.isSequence())
    return Value::undefined(objectTypeRepr(object) + " has no element slice");
  const std::vector<Value> &items = object.items();
  std::vector<Value> out;
  for (size_t i :
       sliceIndices(static_cast<int64_t>(items.size()), start, stop, step))
    out.push_back(items[i]);
  return object.kind() == Value::Kind::Tuple ? Value::tuple(std::move(out))
                                             : Value::list(std::move(out));
}

std::vector<Value> iterate(const Value &v) {
  switch (v.kind()) {
  case Value::Kind::Undefined:
    return {};
  case Value::Kind::String: {
    std::vector<Value> chars;
    std::string piece;
    for (char32_t c : decodeUtf8(v.asString())) {
      piece.clear();
      appendUtf8(piece, c);
      chars.push_back(Value::string(piece));
    }
    return chars;
  }
  case Value::Kind::List:
  case Value::Kind::Tuple:
    return v.items();
  case Value::Kind::Dict: {
    std::vector<Value> keys;
    for (const auto &entry : v.asDict().entries())
      keys.push_back(entry.first);
    return keys;
  }
  case Value::Kind::Iterator: {
    const std::vector<Value> &items = v.iteratorItems();
    std::vector<Value> rest(
        items.begin() + static_cast<std::ptrdiff_t>(v.iteratorPosition()),
        items.end());
    v.advanceIterator(items.size());
    return rest;
  }
  default:
    throw TemplateError("'" + typeName(v) + "' object is not iterable");
  }
}

int64_t length(const Value &v) {
  switch (v.kind()) {
  case Value::Kind::Undefined:
    return 0;
  case Value::Kind::String:
    return static_cast<int64_t>(codePointCount(v.asString()));
  case Value::Kind::List:
  case Value::Kind::Tuple:
    return static_cast<int64_t>(v.items().size());
  case Value::Kind::Dict:
    return static_cast<int64_t>(v.asDict().size());
  case Value::Kind::Loop:
    return v.asLoop().length();
  default:
    throw TemplateError("object of type '" + typeName(v) + "' has no len()");
  }
}

} // namespace cohere2c::text::jinja
