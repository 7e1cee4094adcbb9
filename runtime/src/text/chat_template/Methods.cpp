//===- Methods.cpp - Methods of str, dict and list values -----------------===//
#include "text/chat_template/Methods.h"

#include "text/chat_template/Args.h"
#include "text/chat_template/Error.h"
#include "text/chat_template/Format.h"
#include "text/chat_template/Operators.h"
#include "text/chat_template/PyString.h"
#include "text/chat_template/Unicode.h"

#include <algorithm>
#include <functional>
#include <unordered_map>
#include <unordered_set>

namespace cohere2c::text::jinja {

namespace {

using Names = std::unordered_set<std::string_view>;

const Names kStrMethods = {
    "capitalize",   "casefold",     "center",    "count",     "encode",
    "endswith",     "expandtabs",   "find",      "format",    "format_map",
    "index",        "isalnum",      "isalpha",   "isascii",   "isdecimal",
    "isdigit",      "isidentifier", "islower",   "isnumeric", "isprintable",
    "isspace",      "istitle",      "isupper",   "join",      "ljust",
    "lower",        "lstrip",       "maketrans", "partition", "removeprefix",
    "removesuffix", "replace",      "rfind",     "rindex",    "rjust",
    "rpartition",   "rsplit",       "rstrip",    "split",     "splitlines",
    "startswith",   "strip",        "swapcase",  "title",     "translate",
    "upper",        "zfill"};
const Names kDictMethods = {"clear",      "copy",   "fromkeys", "get",
                            "items",      "keys",   "pop",      "popitem",
                            "setdefault", "update", "values"};
const Names kDictUnsafe = {"clear", "pop", "popitem", "setdefault", "update"};
const Names kListMethods = {"append", "clear",   "copy",   "count",
                            "extend", "index",   "insert", "pop",
                            "remove", "reverse", "sort"};
const Names kListUnsafe = {"append", "reverse", "insert",
                           "sort",   "extend",  "remove"};
const Names kTupleMethods = {"count", "index"};

std::optional<std::string> optionalString(const Value *v, const char *what) {
  if (!v || v->isNone())
    return std::nullopt;
  if (!v->isString())
    throw TemplateError(std::string(what) + " arg must be None or str");
  return v->asString();
}

int64_t intArg(const Value &v, const char *function) {
  if (!v.isIntegral())
    throw TemplateError("'" + typeName(v) +
                        "' object cannot be interpreted "
                        "as an integer (in " +
                        function + ")");
  return v.asInt();
}

std::string stringArg(const Value &v, const char *function) {
  if (!v.isString())
    throw TemplateError(std::string(function) +
                        "() argument must be str, not " + typeName(v));
  return v.asString();
}

Value stringList(const std::vector<std::string> &parts) {
  std::vector<Value> items;
  for (const std::string &part : parts)
    items.push_back(Value::string(part));
  return Value::list(std::move(items));
}

/// s[start:end] in code points, for the optional start/end arguments of
/// find, count, startswith and endswith; `offset` receives start.
std::string window(const std::string &s, const BoundArgs &args, size_t first,
                   int64_t &offset) {
  const Value *start = args.get(first);
  const Value *end = args.get(first + 1);
  offset = 0;
  if ((!start || start->isNone()) && (!end || end->isNone()))
    return s;
  Value sliced = getSlice(Value::string(s), start ? *start : Value::none(),
                          end ? *end : Value::none(), Value::none());
  if (start && start->isIntegral()) {
    int64_t size = static_cast<int64_t>(codePointCount(s));
    offset = start->asInt() < 0 ? std::max<int64_t>(0, start->asInt() + size)
                                : std::min(start->asInt(), size);
  }
  return sliced.asString();
}

bool affixMatches(const std::string &s, const Value &affix, bool atEnd,
                  const char *function) {
  auto matches = [&](const Value &candidate) {
    if (!candidate.isString())
      throw TemplateError(std::string(function) +
                          " first arg must be str or a tuple of str, not " +
                          typeName(candidate));
    const std::string &a = candidate.asString();
    if (a.size() > s.size())
      return false;
    return atEnd ? s.compare(s.size() - a.size(), a.size(), a) == 0
                 : s.compare(0, a.size(), a) == 0;
  };
  if (affix.kind() == Value::Kind::Tuple)
    return std::any_of(affix.items().begin(), affix.items().end(), matches);
  return matches(affix);
}

Value allChars(const std::string &s, const std::function<bool(char32_t)> &f) {
  std::u32string text = decodeUtf8(s);
  return Value::boolean(!text.empty() &&
                        std::all_of(text.begin(), text.end(), f));
}

/// str.islower / str.isupper: some cased character, none of the other case.
Value caseTest(const std::string &s, bool wantLower) {
  bool cased = false;
  for (char32_t c : decodeUtf8(s)) {
    if (wantLower ? (isUpperCase(c) || (isCased(c) && !isLowerCase(c)))
                  : (isLowerCase(c) || (isCased(c) && !isUpperCase(c))))
      return Value::boolean(false);
    cased = cased || isCased(c);
  }
  return Value::boolean(cased);
}

Value strSearch(const std::string &s, const std::string &name,
                CallArgs &&args) {
  BoundArgs bound(name, std::move(args), {"sub", "start", "end"});
  std::string sub = stringArg(bound.require(0), name.c_str());
  int64_t offset;
  std::string text = window(s, bound, 1, offset);
  if (name == "count")
    return Value::integer(pystr::count(text, sub));
  bool fromRight = name[0] == 'r';
  int64_t at = pystr::find(text, sub, fromRight);
  if (at < 0 && (name == "index" || name == "rindex"))
    throw TemplateError("substring not found");
  return Value::integer(at < 0 ? -1 : at + offset);
}

Value strAffix(const std::string &s, const std::string &name, CallArgs &&args) {
  BoundArgs bound(name, std::move(args), {"prefix", "start", "end"});
  int64_t offset;
  std::string text = window(s, bound, 1, offset);
  return Value::boolean(
      affixMatches(text, bound.require(0), name == "endswith", name.c_str()));
}

Value strSplit(const std::string &s, const std::string &name, CallArgs &&args) {
  if (name == "splitlines") {
    BoundArgs bound(name, std::move(args), {"keepends"});
    if (truthy(bound.getOr(0, Value::boolean(false))))
      throw TemplateError("str.splitlines(keepends=True) is not supported");
    std::vector<std::string> lines;
    for (const std::u32string &line : splitLines(decodeUtf8(s)))
      lines.push_back(encodeUtf8(line));
    return stringList(lines);
  }
  BoundArgs bound(name, std::move(args), {"sep", "maxsplit"});
  int64_t maxsplit = intArg(bound.getOr(1, Value::integer(-1)), "split");
  return stringList(pystr::split(s, optionalString(bound.get(0), name.c_str()),
                                 maxsplit, name == "rsplit"));
}

Value strPartition(const std::string &s, const std::string &name,
                   CallArgs &&args) {
  BoundArgs bound(name, std::move(args), {"sep"});
  std::string sep = stringArg(bound.require(0), name.c_str());
  if (sep.empty())
    throw TemplateError("empty separator");
  bool fromRight = name == "rpartition";
  size_t at = fromRight ? s.rfind(sep) : s.find(sep);
  if (at == std::string::npos)
    return Value::tuple(
        fromRight ? std::vector<Value>{Value::string(""), Value::string(""),
                                       Value::string(s)}
                  : std::vector<Value>{Value::string(s), Value::string(""),
                                       Value::string("")});
  return Value::tuple({Value::string(s.substr(0, at)), Value::string(sep),
                       Value::string(s.substr(at + sep.size()))});
}

Value strJustify(const std::string &s, const std::string &name,
                 CallArgs &&args) {
  if (name == "zfill") {
    BoundArgs bound(name, std::move(args), {"width"});
    int64_t width = intArg(bound.require(0), "zfill");
    bool signed_ = !s.empty() && (s[0] == '+' || s[0] == '-');
    std::string digits = pystr::justify(signed_ ? s.substr(1) : s,
                                        width - (signed_ ? 1 : 0), "0", '>');
    return Value::string(signed_ ? s.substr(0, 1) + digits : digits);
  }
  BoundArgs bound(name, std::move(args), {"width", "fillchar"});
  int64_t width = intArg(bound.require(0), name.c_str());
  std::string fill =
      stringArg(bound.getOr(1, Value::string(" ")), name.c_str());
  char align = name == "ljust" ? '<' : name == "rjust" ? '>' : '^';
  return Value::string(pystr::justify(s, width, fill, align));
}

Value strJoin(const std::string &s, CallArgs &&args) {
  BoundArgs bound("join", std::move(args), {"iterable"});
  std::string out;
  std::vector<Value> items = iterate(bound.require(0));
  for (size_t i = 0; i < items.size(); ++i) {
    if (!items[i].isString())
      throw TemplateError("sequence item " + std::to_string(i) +
                          ": expected str instance, " + typeName(items[i]) +
                          " found");
    if (i)
      out += s;
    out += items[i].asString();
    checkStringSize(out.size());
  }
  return Value::string(std::move(out));
}

Value strCase(const std::string &s, const std::string &name) {
  if (name == "upper")
    return Value::string(pystr::upper(s));
  if (name == "lower" || name == "casefold")
    return Value::string(pystr::lower(s));
  if (name == "title")
    return Value::string(pystr::title(s));
  if (name == "capitalize")
    return Value::string(pystr::capitalize(s));
  std::u32string out;
  for (char32_t c : decodeUtf8(s))
    out += isUpperCase(c)   ? toLower(std::u32string(1, c))
           : isLowerCase(c) ? toUpper(std::u32string(1, c))
                            : std::u32string(1, c);
  return Value::string(encodeUtf8(out));
}

Value strPredicate(const std::string &s, const std::string &name) {
  if (name == "isdigit" || name == "isdecimal")
    return allChars(s, isDigit);
  if (name == "isnumeric")
    return allChars(s, isNumeric);
  if (name == "isalpha")
    return allChars(s, isAlpha);
  if (name == "isalnum")
    return allChars(s, [](char32_t c) { return isAlpha(c) || isNumeric(c); });
  if (name == "isspace")
    return allChars(s, isSpace);
  return caseTest(s, name == "islower");
}

Value strMethod(const std::string &s, const std::string &name,
                CallArgs &&args) {
  if (name == "strip" || name == "lstrip" || name == "rstrip") {
    BoundArgs bound(name, std::move(args), {"chars"});
    pystr::Side side = name[0] == 'l'   ? pystr::Side::Left
                       : name[0] == 'r' ? pystr::Side::Right
                                        : pystr::Side::Both;
    return Value::string(
        pystr::strip(s, optionalString(bound.get(0), name.c_str()), side));
  }
  if (name == "split" || name == "rsplit" || name == "splitlines")
    return strSplit(s, name, std::move(args));
  if (name == "startswith" || name == "endswith")
    return strAffix(s, name, std::move(args));
  if (name == "find" || name == "rfind" || name == "index" ||
      name == "rindex" || name == "count")
    return strSearch(s, name, std::move(args));
  if (name == "replace") {
    BoundArgs bound(name, std::move(args), {"old", "new", "count"});
    return Value::string(
        pystr::replace(s, stringArg(bound.require(0), "replace"),
                       stringArg(bound.require(1), "replace"),
                       intArg(bound.getOr(2, Value::integer(-1)), "replace")));
  }
  if (name == "join")
    return strJoin(s, std::move(args));
  if (name == "format")
    return Value::string(braceFormat(s, args));
  if (name == "center" || name == "ljust" || name == "rjust" || name == "zfill")
    return strJustify(s, name, std::move(args));
  if (name == "partition" || name == "rpartition")
    return strPartition(s, name, std::move(args));
  if (name == "removeprefix" || name == "removesuffix") {
    BoundArgs bound(name, std::move(args), {"affix"});
    std::string affix = stringArg(bound.require(0), name.c_str());
    bool suffix = name == "removesuffix";
    if (!affixMatches(s, Value::string(affix), suffix, name.c_str()))
      return Value::string(s);
    return Value::string(suffix ? s.substr(0, s.size() - affix.size())
                                : s.substr(affix.size()));
  }
  if (name == "upper" || name == "lower" || name == "casefold" ||
      name == "title" || name == "capitalize" || name == "swapcase") {
    expectNoArgs(name, args);
    return strCase(s, name);
  }
  if (name == "isdigit" || name == "isdecimal" || name == "isnumeric" ||
      name == "isalpha" || name == "isalnum" || name == "isspace" ||
      name == "islower" || name == "isupper") {
    expectNoArgs(name, args);
    return strPredicate(s, name);
  }
  throw TemplateError("str." + name + "() is not supported by this renderer");
}

Value dictMethod(const Value &object, const std::string &name,
                 CallArgs &&args) {
  const Dict &dict = object.asDict();
  if (name == "get") {
    BoundArgs bound(name, std::move(args), {"key", "default"});
    const Value &key = bound.require(0);
    if (key.kind() == Value::Kind::List || key.kind() == Value::Kind::Dict)
      throw TemplateError("unhashable type: '" + typeName(key) + "'");
    const Value *value = dict.find(key);
    return value ? *value : bound.getOr(1, Value::none());
  }
  expectNoArgs(name, args);
  if (name == "copy")
    return object;
  std::vector<Value> out;
  for (const auto &[key, value] : dict.entries()) {
    if (name == "items")
      out.push_back(Value::tuple({key, value}));
    else
      out.push_back(name == "keys" ? key : value);
  }
  if (name == "items" || name == "keys" || name == "values")
    return Value::list(std::move(out));
  throw TemplateError("dict." + name + "() is not supported by this renderer");
}

Value sequenceMethod(const Value &object, const std::string &name,
                     CallArgs &&args) {
  const std::vector<Value> &items = object.items();
  if (name == "copy") {
    expectNoArgs(name, args);
    return object;
  }
  if (name == "count" || name == "index") {
    BoundArgs bound(name, std::move(args), {"value"});
    const Value &needle = bound.require(0);
    int64_t count = 0;
    for (size_t i = 0; i < items.size(); ++i) {
      if (!equals(items[i], needle))
        continue;
      if (name == "index")
        return Value::integer(static_cast<int64_t>(i));
      ++count;
    }
    if (name == "index")
      throw TemplateError(toRepr(needle) + " is not in " + typeName(object));
    return Value::integer(count);
  }
  throw TemplateError(typeName(object) + "." + name +
                      "() is not supported by this renderer (it would modify "
                      "the " +
                      typeName(object) + ")");
}

class BoundMethod : public Callable {
public:
  BoundMethod(Value object, std::string name)
      : object_(std::move(object)), name_(std::move(name)) {}
  const char *typeName() const override { return "builtin_function_or_method"; }
  std::string repr() const override {
    return "<built-in method " + name_ + " of " + jinja::typeName(object_) +
           " object>";
  }
  Value call(Interpreter &, CallArgs &&args) const override {
    switch (object_.kind()) {
    case Value::Kind::String:
      return strMethod(object_.asString(), name_, std::move(args));
    case Value::Kind::Dict:
      return dictMethod(object_, name_, std::move(args));
    default:
      return sequenceMethod(object_, name_, std::move(args));
    }
  }

private:
  Value object_;
  std::string name_;
};

} // namespace

MethodKind lookupMethod(const Value &object, std::string_view name) {
  if (name.substr(0, 1) == "_")
    return name.substr(0, 2) == "__" ? MethodKind::Unsafe : MethodKind::None;
  switch (object.kind()) {
  case Value::Kind::String:
    return kStrMethods.count(name) ? MethodKind::Safe : MethodKind::None;
  case Value::Kind::Dict:
    if (kDictUnsafe.count(name))
      return MethodKind::Unsafe;
    return kDictMethods.count(name) ? MethodKind::Safe : MethodKind::None;
  case Value::Kind::List:
    if (kListUnsafe.count(name))
      return MethodKind::Unsafe;
    return kListMethods.count(name) ? MethodKind::Safe : MethodKind::None;
  case Value::Kind::Tuple:
    return kTupleMethods.count(name) ? MethodKind::Safe : MethodKind::None;
  default:
    return MethodKind::None;
  }
}

Value boundMethod(const Value &object, const std::string &name) {
  return Value::callable(std::make_shared<BoundMethod>(object, name));
}

} // namespace cohere2c::text::jinja
