//===- Filters.cpp - jinja2's filters (`x | tojson`, `s | trim`)
//-----------===//
#include "text/chat_template/Filters.h"

#include "text/chat_template/Error.h"
#include "text/chat_template/Format.h"
#include "text/chat_template/JsonValue.h"
#include "text/chat_template/Methods.h"
#include "text/chat_template/Operators.h"
#include "text/chat_template/PyString.h"
#include "text/chat_template/SequenceFilters.h"
#include "text/chat_template/Unicode.h"

#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <unordered_map>

namespace cohere2c::text::jinja {

namespace {

using FilterFn = Value (*)(const Value &, CallArgs &&);

/// jinja2's soft_str: str(value), '' for Undefined.
std::string softStr(const Value &v) { return toStr(v); }

/// Python's int(text, base) for the int filter; nullopt where Python raises
/// ValueError.
std::optional<int64_t> parseInt(const std::string &text, int64_t base) {
  std::string s = pystr::strip(text, std::nullopt, pystr::Side::Both);
  size_t i = 0;
  bool negative = false;
  if (i < s.size() && (s[i] == '+' || s[i] == '-'))
    negative = s[i++] == '-';
  if (base == 0 || base == 16 || base == 8 || base == 2) {
    if (i + 1 < s.size() && s[i] == '0') {
      char p = static_cast<char>(std::tolower(s[i + 1]));
      int64_t prefixBase = p == 'x' ? 16 : p == 'o' ? 8 : p == 'b' ? 2 : 0;
      if (prefixBase && (base == 0 || base == prefixBase)) {
        base = prefixBase;
        i += 2;
        if (i < s.size() && s[i] == '_')
          ++i;
      }
    }
    if (base == 0)
      base = 10;
  }
  if (base < 2 || base > 36 || i >= s.size())
    return std::nullopt;
  int64_t value = 0;
  bool lastUnderscore = true;
  for (; i < s.size(); ++i) {
    char c = static_cast<char>(std::tolower(s[i]));
    if (c == '_' && !lastUnderscore) {
      lastUnderscore = true;
      continue;
    }
    int64_t digit = c >= '0' && c <= '9'   ? c - '0'
                    : c >= 'a' && c <= 'z' ? c - 'a' + 10
                                           : 99;
    if (digit >= base)
      return std::nullopt;
    value = checkedAdd(checkedMul(value, base), digit);
    lastUnderscore = false;
  }
  if (lastUnderscore)
    return std::nullopt;
  return negative ? -value : value;
}

/// Python's float(text); nullopt where Python raises ValueError.
std::optional<double> parseFloat(const std::string &text) {
  std::string s = pystr::strip(text, std::nullopt, pystr::Side::Both);
  std::string digits;
  for (size_t i = 0; i < s.size(); ++i) {
    bool between = i > 0 && i + 1 < s.size() && std::isdigit(s[i - 1]) &&
                   std::isdigit(s[i + 1]);
    if (s[i] == '_' && between)
      continue;
    if (s[i] == 'x' || s[i] == 'X' || s[i] == '(' || s[i] == '_')
      return std::nullopt;
    digits.push_back(s[i]);
  }
  if (digits.empty())
    return std::nullopt;
  char *end = nullptr;
  errno = 0;
  double d = std::strtod(digits.c_str(), &end);
  if (end != digits.c_str() + digits.size())
    return std::nullopt;
  return d;
}

Value toNumber(const Value &v, bool wantInt, int64_t base) {
  if (v.isUndefined())
    failUndefined(v);
  if (v.isIntegral())
    return Value::integer(v.asInt());
  if (v.kind() == Value::Kind::Float) {
    double d = v.asDouble();
    if (!wantInt)
      return v;
    if (!std::isfinite(d) || std::fabs(d) >= 9.2e18)
      return Value();
    return Value::integer(static_cast<int64_t>(d));
  }
  if (!v.isString())
    return Value();
  if (wantInt)
    if (auto i = parseInt(v.asString(), base))
      return Value::integer(*i);
  std::optional<double> d = parseFloat(v.asString());
  if (!d)
    return Value();
  if (!wantInt)
    return Value::real(*d);
  if (!std::isfinite(*d) || std::fabs(*d) >= 9.2e18)
    return Value();
  return Value::integer(static_cast<int64_t>(*d));
}

// do_int: int(value), else int(float(value)), else the default.
Value filterInt(const Value &input, CallArgs &&args) {
  BoundArgs bound("int", std::move(args), {"default", "base"});
  Value base = bound.getOr(1, Value::integer(10));
  if (!base.isIntegral())
    throw TemplateError("int() base must be an int");
  Value result = toNumber(input, true, base.asInt());
  return result.isUndefined() ? bound.getOr(0, Value::integer(0)) : result;
}

// do_float
Value filterFloat(const Value &input, CallArgs &&args) {
  BoundArgs bound("float", std::move(args), {"default"});
  Value result = toNumber(input, false, 10);
  if (result.isUndefined())
    return bound.getOr(0, Value::real(0.0));
  return Value::real(result.asDouble());
}

Value filterAbs(const Value &input, CallArgs &&args) {
  expectNoArgs("abs", args);
  if (input.isIntegral())
    return Value::integer(input.asInt() < 0 ? checkedMul(input.asInt(), -1)
                                            : input.asInt());
  if (input.kind() == Value::Kind::Float)
    return Value::real(std::fabs(input.asDouble()));
  throw TemplateError("bad operand type for abs(): '" + typeName(input) + "'");
}

/// Python's round(x, ndigits) on a float: correctly rounded, ties to even.
double roundFloat(double x, int64_t precision) {
  if (!std::isfinite(x) || precision > 300)
    return x;
  if (precision >= 0) {
    char buf[400];
    std::snprintf(buf, sizeof buf, "%.*f", static_cast<int>(precision), x);
    return std::strtod(buf, nullptr);
  }
  double scale = std::pow(10.0, static_cast<double>(-precision));
  return std::nearbyint(x / scale) * scale;
}

// do_round
Value filterRound(const Value &input, CallArgs &&args) {
  BoundArgs bound("round", std::move(args), {"precision", "method"});
  Value precisionValue = bound.getOr(0, Value::integer(0));
  if (!precisionValue.isIntegral())
    throw TemplateError("'" + typeName(precisionValue) +
                        "' object cannot be interpreted as an integer");
  int64_t precision = precisionValue.asInt();
  Value method = bound.getOr(1, Value::string("common"));
  std::string how = method.isString() ? method.asString() : "";
  if (how != "common" && how != "ceil" && how != "floor")
    throw TemplateError("method must be common, ceil or floor");
  if (!input.isNumber())
    throw TemplateError("type " + typeName(input) +
                        " doesn't define __round__ method");
  if (how == "common") {
    if (input.isIntegral() && precision >= 0)
      return Value::integer(input.asInt());
    double rounded = roundFloat(input.asDouble(), precision);
    return input.isIntegral() ? Value::integer(static_cast<int64_t>(rounded))
                              : Value::real(rounded);
  }
  double scale = std::pow(10.0, static_cast<double>(precision));
  double scaled = input.asDouble() * scale;
  double whole = how == "ceil" ? std::ceil(scaled) : std::floor(scaled);
  return Value::real(whole / scale);
}

Value filterDefault(const Value &input, CallArgs &&args) {
  BoundArgs bound("default", std::move(args), {"default_value", "boolean"});
  bool boolean = truthy(bound.getOr(1, Value::boolean(false)));
  if (input.isUndefined() || (boolean && !truthy(input)))
    return bound.getOr(0, Value::string(""));
  return input;
}

Value filterLength(const Value &input, CallArgs &&args) {
  expectNoArgs("length", args);
  return Value::integer(length(input));
}

// markupsafe.escape: the five HTML characters, whatever autoescape says.
Value filterEscape(const Value &input, CallArgs &&args) {
  expectNoArgs("escape", args);
  std::string out;
  for (char c : softStr(input)) {
    switch (c) {
    case '&':
      out += "&amp;";
      break;
    case '<':
      out += "&lt;";
      break;
    case '>':
      out += "&gt;";
      break;
    case '"':
      out += "&#34;";
      break;
    case '\'':
      out += "&#39;";
      break;
    default:
      out.push_back(c);
    }
  }
  return Value::string(std::move(out));
}

Value filterString(const Value &input, CallArgs &&args) {
  expectNoArgs("string", args);
  return Value::string(softStr(input));
}

Value filterLower(const Value &input, CallArgs &&args) {
  expectNoArgs("lower", args);
  return Value::string(pystr::lower(softStr(input)));
}

Value filterUpper(const Value &input, CallArgs &&args) {
  expectNoArgs("upper", args);
  return Value::string(pystr::upper(softStr(input)));
}

Value filterCapitalize(const Value &input, CallArgs &&args) {
  expectNoArgs("capitalize", args);
  return Value::string(pystr::capitalize(softStr(input)));
}

// do_title: words start after '-', whitespace or an opening bracket; each
// piece is item[0].upper() + item[1:].lower().
Value filterTitle(const Value &input, CallArgs &&args) {
  expectNoArgs("title", args);
  std::u32string text = decodeUtf8(softStr(input));
  auto separator = [](char32_t c) {
    return c == '-' || c == '(' || c == '{' || c == '[' || c == '<' ||
           isSpace(c);
  };
  std::u32string out;
  for (size_t i = 0; i < text.size();) {
    size_t j = i;
    bool sep = separator(text[i]);
    while (j < text.size() && separator(text[j]) == sep)
      ++j;
    std::u32string_view piece(text.data() + i, j - i);
    out += toUpper(piece.substr(0, 1)) + toLower(piece.substr(1));
    i = j;
  }
  return Value::string(encodeUtf8(out));
}

Value filterTrim(const Value &input, CallArgs &&args) {
  BoundArgs bound("trim", std::move(args), {"chars"});
  std::optional<std::string> chars;
  if (const Value *c = bound.get(0); c && !c->isNone()) {
    if (!c->isString())
      throw TemplateError("strip arg must be None or str");
    chars = c->asString();
  }
  return Value::string(pystr::strip(softStr(input), chars, pystr::Side::Both));
}

Value filterReplace(const Value &input, CallArgs &&args) {
  BoundArgs bound("replace", std::move(args), {"old", "new", "count"});
  Value count = bound.getOr(2, Value::none());
  if (!count.isNone() && !count.isIntegral())
    throw TemplateError("'" + typeName(count) +
                        "' object cannot be interpreted as an integer");
  return Value::string(pystr::replace(softStr(input), softStr(bound.require(0)),
                                      softStr(bound.require(1)),
                                      count.isNone() ? -1 : count.asInt()));
}

// do_indent, including its quirk of appending "\n" before splitlines().
Value filterIndent(const Value &input, CallArgs &&args) {
  BoundArgs bound("indent", std::move(args), {"width", "first", "blank"});
  Value width = bound.getOr(0, Value::integer(4));
  std::string indention;
  if (width.isString())
    indention = width.asString();
  else if (width.isIntegral())
    indention = pystr::justify("", width.asInt(), " ", '<');
  else
    throw TemplateError("can't multiply sequence by non-int of type '" +
                        typeName(width) + "'");
  Value text = binaryOp(BinaryOp::Add, input, Value::string("\n"));
  std::vector<std::u32string> lines = splitLines(decodeUtf8(text.asString()));
  std::string out;
  if (truthy(bound.getOr(2, Value::boolean(false)))) {
    for (size_t i = 0; i < lines.size(); ++i)
      out += (i ? "\n" + indention : "") + encodeUtf8(lines[i]);
  } else {
    out = lines.empty() ? "" : encodeUtf8(lines[0]);
    for (size_t i = 1; i < lines.size(); ++i)
      out += "\n" + (lines[i].empty() ? "" : indention + encodeUtf8(lines[i]));
  }
  checkStringSize(out.size());
  if (truthy(bound.getOr(1, Value::boolean(false))))
    out = indention + out;
  return Value::string(std::move(out));
}

Value filterCenter(const Value &input, CallArgs &&args) {
  BoundArgs bound("center", std::move(args), {"width"});
  Value width = bound.getOr(0, Value::integer(80));
  if (!width.isIntegral())
    throw TemplateError("'" + typeName(width) +
                        "' object cannot be interpreted as an integer");
  return Value::string(pystr::justify(softStr(input), width.asInt(), " ", '^'));
}

// do_truncate with the default policy truncate.leeway = 5.
Value filterTruncate(const Value &input, CallArgs &&args) {
  BoundArgs bound("truncate", std::move(args),
                  {"length", "killwords", "end", "leeway"});
  Value lengthValue = bound.getOr(0, Value::integer(255));
  Value leewayValue = bound.getOr(3, Value::none());
  std::u32string end =
      decodeUtf8(softStr(bound.getOr(2, Value::string("..."))));
  if (!lengthValue.isIntegral() ||
      (!leewayValue.isNone() && !leewayValue.isIntegral()))
    throw TemplateError("truncate: length and leeway must be integers");
  int64_t limit = lengthValue.asInt();
  int64_t leeway = leewayValue.isNone() ? 5 : leewayValue.asInt();
  if (limit < static_cast<int64_t>(end.size()) || leeway < 0)
    throw TemplateError("expected length >= " + std::to_string(end.size()) +
                        " and leeway >= 0");
  std::u32string s = decodeUtf8(softStr(input));
  if (static_cast<int64_t>(s.size()) <= limit + leeway)
    return Value::string(encodeUtf8(s));
  std::u32string head = s.substr(0, static_cast<size_t>(limit) - end.size());
  if (!truthy(bound.getOr(1, Value::boolean(false)))) {
    size_t space = head.rfind(U' ');
    if (space != std::u32string::npos)
      head.resize(space);
  }
  return Value::string(encodeUtf8(head + end));
}

Value filterWordCount(const Value &input, CallArgs &&args) {
  expectNoArgs("wordcount", args);
  int64_t words = 0;
  bool inWord = false;
  for (char32_t c : decodeUtf8(softStr(input))) {
    bool word = isWordChar(c);
    words += word && !inWord;
    inWord = word;
  }
  return Value::integer(words);
}

// do_format: soft_str(value) % (kwargs or args).
Value filterFormat(const Value &input, CallArgs &&args) {
  if (!args.positional.empty() && !args.keyword.empty())
    throw TemplateError(
        "can't handle positional and keyword arguments at the same time");
  Value formatArgs;
  if (!args.keyword.empty()) {
    Dict mapping;
    for (auto &[name, value] : args.keyword)
      mapping.set(Value::string(name), value);
    formatArgs = Value::dict(std::move(mapping));
  } else {
    formatArgs = Value::tuple(std::move(args.positional));
  }
  return Value::string(percentFormat(softStr(input), formatArgs));
}

// do_attr: only real attributes; a dict's keys are not attributes.
Value filterAttr(const Value &input, CallArgs &&args) {
  BoundArgs bound("attr", std::move(args), {"name"});
  const Value &name = bound.require(0);
  if (!name.isString())
    throw TemplateError("attribute name must be string");
  if (input.kind() == Value::Kind::Namespace ||
      input.kind() == Value::Kind::Loop || input.isUndefined() ||
      lookupMethod(input, name.asString()) != MethodKind::None)
    return getAttribute(input, name.asString());
  return undefinedAttribute(input, name.asString());
}

// transformers' tojson: json.dumps(x, ensure_ascii=False, indent=indent,
// separators=separators, sort_keys=sort_keys).
Value filterToJson(const Value &input, CallArgs &&args) {
  BoundArgs bound("tojson", std::move(args),
                  {"ensure_ascii", "indent", "separators", "sort_keys"});
  JsonOptions options;
  options.ensureAscii = truthy(bound.getOr(0, Value::boolean(false)));
  Value indent = bound.getOr(1, Value::none());
  if (indent.isString())
    options.indent = indent.asString();
  else if (indent.isIntegral())
    options.indent = pystr::justify("", indent.asInt(), " ", '<');
  else if (!indent.isNone())
    throw TemplateError("indent must be an int, a str or None");
  Value separators = bound.getOr(2, Value::none());
  if (!separators.isNone()) {
    if (!separators.isSequence() || separators.items().size() != 2 ||
        !separators.items()[0].isString() || !separators.items()[1].isString())
      throw TemplateError("separators must be a pair of strings");
    options.separators = std::make_pair(separators.items()[0].asString(),
                                        separators.items()[1].asString());
  }
  options.sortKeys = truthy(bound.getOr(3, Value::boolean(false)));
  return Value::string(toJson(input, options));
}

const std::unordered_map<std::string_view, FilterFn> &filters() {
  static const std::unordered_map<std::string_view, FilterFn> table = {
      {"abs", filterAbs},
      {"attr", filterAttr},
      {"capitalize", filterCapitalize},
      {"center", filterCenter},
      {"count", filterLength},
      {"d", filterDefault},
      {"default", filterDefault},
      {"dictsort", filterDictSort},
      {"e", filterEscape},
      {"escape", filterEscape},
      {"first", filterFirst},
      {"float", filterFloat},
      {"forceescape", filterEscape},
      {"format", filterFormat},
      {"indent", filterIndent},
      {"int", filterInt},
      {"items", filterItems},
      {"join", filterJoin},
      {"last", filterLast},
      {"length", filterLength},
      {"list", filterList},
      {"lower", filterLower},
      {"map", filterMap},
      {"max", filterMax},
      {"min", filterMin},
      {"reject", filterReject},
      {"rejectattr", filterRejectAttr},
      {"replace", filterReplace},
      {"reverse", filterReverse},
      {"round", filterRound},
      {"safe", filterString},
      {"select", filterSelect},
      {"selectattr", filterSelectAttr},
      {"sort", filterSort},
      {"string", filterString},
      {"sum", filterSum},
      {"title", filterTitle},
      {"tojson", filterToJson},
      {"trim", filterTrim},
      {"truncate", filterTruncate},
      {"unique", filterUnique},
      {"upper", filterUpper},
      {"wordcount", filterWordCount},
  };
  return table;
}

} // namespace

bool isKnownFilter(std::string_view name) { return filters().count(name) != 0; }

Value applyFilter(const std::string &name, const Value &input,
                  CallArgs &&args) {
  auto it = filters().find(name);
  if (it == filters().end())
    throw TemplateError("no filter named '" + name + "'");
  return it->second(input, std::move(args));
}

} // namespace cohere2c::text::jinja
