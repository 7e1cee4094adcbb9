//===- Tests.cpp - jinja2's tests (`x is defined`, `n is divisibleby 3`) --===//
#include "text/chat_template/Tests.h"

#include "text/chat_template/Error.h"
#include "text/chat_template/Filters.h"
#include "text/chat_template/Methods.h"
#include "text/chat_template/Operators.h"
#include "text/chat_template/PyString.h"

#include <unordered_map>

namespace cohere2c::text::jinja {

namespace {

using TestFn = bool (*)(const Value &, CallArgs &&);

const Value &onlyArg(const char *test, CallArgs &&args, Value &storage) {
  BoundArgs bound(test, std::move(args), {"other"});
  storage = bound.require(0);
  return storage;
}

bool noArgs(const char *test, const CallArgs &args) {
  expectNoArgs(test, args);
  return true;
}

template <CompareOp Op> bool compareTest(const Value &v, CallArgs &&args) {
  Value other;
  return compare(Op, v, onlyArg("comparison", std::move(args), other));
}

/// `value % 2 == 0` and friends, with Python's % (Undefined fails).
bool remainderIs(const Value &v, const Value &divisor, int64_t wanted) {
  Value remainder = binaryOp(BinaryOp::Mod, v, divisor);
  return equals(remainder, Value::integer(wanted));
}

bool stringCaseTest(const Value &v, bool lower) {
  std::string text = toStr(v);
  bool cased = pystr::lower(text) != pystr::upper(text);
  return cased &&
         (lower ? pystr::lower(text) == text : pystr::upper(text) == text);
}

const std::unordered_map<std::string_view, TestFn> &tests() {
  static const std::unordered_map<std::string_view, TestFn> table = {
      {"defined",
       [](const Value &v, CallArgs &&a) {
         return noArgs("defined", a) && !v.isUndefined();
       }},
      {"undefined",
       [](const Value &v, CallArgs &&a) {
         return noArgs("undefined", a) && v.isUndefined();
       }},
      {"none", [](const Value &v,
                  CallArgs &&a) { return noArgs("none", a) && v.isNone(); }},
      {"boolean",
       [](const Value &v, CallArgs &&a) {
         return noArgs("boolean", a) && v.isBool();
       }},
      {"true",
       [](const Value &v, CallArgs &&a) {
         return noArgs("true", a) && v.isBool() && v.asBool();
       }},
      {"false",
       [](const Value &v, CallArgs &&a) {
         return noArgs("false", a) && v.isBool() && !v.asBool();
       }},
      {"integer",
       [](const Value &v, CallArgs &&a) {
         return noArgs("integer", a) && v.kind() == Value::Kind::Int;
       }},
      {"float",
       [](const Value &v, CallArgs &&a) {
         return noArgs("float", a) && v.kind() == Value::Kind::Float;
       }},
      {"number",
       [](const Value &v, CallArgs &&a) {
         return noArgs("number", a) && v.isNumber();
       }},
      {"string",
       [](const Value &v, CallArgs &&a) {
         return noArgs("string", a) && v.isString();
       }},
      {"mapping",
       [](const Value &v, CallArgs &&a) {
         return noArgs("mapping", a) && v.kind() == Value::Kind::Dict;
       }},
      // len(value) and value.__getitem__ exist: Undefined has both.
      {"sequence",
       [](const Value &v, CallArgs &&a) {
         return noArgs("sequence", a) &&
                (v.isString() || v.isSequence() || v.isUndefined() ||
                 v.kind() == Value::Kind::Dict);
       }},
      {"iterable",
       [](const Value &v, CallArgs &&a) {
         return noArgs("iterable", a) &&
                (v.isString() || v.isSequence() || v.isUndefined() ||
                 v.kind() == Value::Kind::Dict ||
                 v.kind() == Value::Kind::Iterator ||
                 v.kind() == Value::Kind::Loop);
       }},
      // Undefined and loop objects define __call__ too.
      {"callable",
       [](const Value &v, CallArgs &&a) {
         return noArgs("callable", a) &&
                (v.kind() == Value::Kind::Callable || v.isUndefined() ||
                 v.kind() == Value::Kind::Loop);
       }},
      // Python's `is`: singletons, small ints (CPython caches -5..256) and
      // the same object.
      {"sameas",
       [](const Value &v, CallArgs &&a) {
         Value other;
         onlyArg("sameas", std::move(a), other);
         if (v.kind() != other.kind())
           return false;
         if (v.isNone() || v.isBool() || v.kind() == Value::Kind::Int)
           return equals(v, other) && (v.kind() != Value::Kind::Int ||
                                       (v.asInt() >= -5 && v.asInt() <= 256));
         return v.identity() != nullptr && v.identity() == other.identity();
       }},
      {"lower",
       [](const Value &v, CallArgs &&a) {
         return noArgs("lower", a) && stringCaseTest(v, true);
       }},
      {"upper",
       [](const Value &v, CallArgs &&a) {
         return noArgs("upper", a) && stringCaseTest(v, false);
       }},
      {"even",
       [](const Value &v, CallArgs &&a) {
         return noArgs("even", a) && remainderIs(v, Value::integer(2), 0);
       }},
      {"odd",
       [](const Value &v, CallArgs &&a) {
         return noArgs("odd", a) && remainderIs(v, Value::integer(2), 1);
       }},
      {"divisibleby",
       [](const Value &v, CallArgs &&a) {
         BoundArgs bound("divisibleby", std::move(a), {"num"});
         return remainderIs(v, bound.require(0), 0);
       }},
      {"in",
       [](const Value &v, CallArgs &&a) {
         BoundArgs bound("in", std::move(a), {"seq"});
         return contains(bound.require(0), v);
       }},
      {"filter",
       [](const Value &v, CallArgs &&a) {
         return noArgs("filter", a) && v.isString() &&
                isKnownFilter(v.asString());
       }},
      {"test",
       [](const Value &v, CallArgs &&a) {
         return noArgs("test", a) && v.isString() && isKnownTest(v.asString());
       }},
      {"eq", compareTest<CompareOp::Eq>},
      {"equalto", compareTest<CompareOp::Eq>},
      {"==", compareTest<CompareOp::Eq>},
      {"ne", compareTest<CompareOp::Ne>},
      {"!=", compareTest<CompareOp::Ne>},
      {"lt", compareTest<CompareOp::Lt>},
      {"lessthan", compareTest<CompareOp::Lt>},
      {"<", compareTest<CompareOp::Lt>},
      {"le", compareTest<CompareOp::Le>},
      {"<=", compareTest<CompareOp::Le>},
      {"gt", compareTest<CompareOp::Gt>},
      {"greaterthan", compareTest<CompareOp::Gt>},
      {">", compareTest<CompareOp::Gt>},
      {"ge", compareTest<CompareOp::Ge>},
      {">=", compareTest<CompareOp::Ge>},
  };
  return table;
}

} // namespace

bool isKnownTest(std::string_view name) { return tests().count(name) != 0; }

bool applyTest(const std::string &name, const Value &input, CallArgs &&args) {
  auto it = tests().find(name);
  if (it == tests().end())
    throw TemplateError("no test named '" + name + "'");
  return it->second(input, std::move(args));
}

} // namespace cohere2c::text::jinja
