//===- Format.cpp - Python's printf-style and str.format formatting -------===//
#include "text/chat_template/Format.h"

#include "text/chat_template/Error.h"
#include "text/chat_template/Operators.h"
#include "text/chat_template/Unicode.h"

#include <cmath>
#include <cstdio>
#include <optional>

namespace cohere2c::text::jinja {

namespace {

/// snprintf into a std::string; widths are capped before we get here.
template <typename T> std::string cFormat(const std::string &spec, T value) {
  int size = std::snprintf(nullptr, 0, spec.c_str(), value);
  std::string out(static_cast<size_t>(size) + 1, '\0');
  std::snprintf(out.data(), out.size(), spec.c_str(), value);
  out.pop_back();
  return out;
}

size_t parseWidth(const std::string &text, size_t &i) {
  size_t width = 0;
  while (i < text.size() && text[i] >= '0' && text[i] <= '9') {
    width = width * 10 + static_cast<size_t>(text[i++] - '0');
    checkStringSize(width);
  }
  return width;
}

std::string pad(std::string text, size_t width, char32_t fill, char align) {
  size_t length = codePointCount(text);
  if (length >= width)
    return text;
  size_t total = width - length;
  size_t left = align == '<' ? 0 : align == '^' ? total / 2 : total;
  std::string fillText;
  appendUtf8(fillText, fill);
  std::string out;
  for (size_t i = 0; i < left; ++i)
    out += fillText;
  out += text;
  for (size_t i = left; i < total; ++i)
    out += fillText;
  return out;
}

/// One %-conversion: flags, width and precision already parsed.
struct PercentSpec {
  std::string flags;
  size_t width = 0;
  int precision = -1;
  char conversion = 's';
};

std::string percentNumber(const PercentSpec &spec, const Value &v) {
  char c = spec.conversion;
  bool integral =
      c == 'd' || c == 'i' || c == 'u' || c == 'x' || c == 'X' || c == 'o';
  if (!v.isNumber() ||
      (v.kind() == Value::Kind::Float && (c == 'x' || c == 'X' || c == 'o')))
    throw TemplateError(
        std::string("%") + c + " format: " +
        (c == 'x' || c == 'X' || c == 'o' ? "an integer" : "a real number") +
        " is required, not " + typeName(v));
  std::string cSpec = "%" + spec.flags;
  if (spec.width)
    cSpec += std::to_string(spec.width);
  if (spec.precision >= 0)
    cSpec += "." + std::to_string(spec.precision);
  if (integral) {
    double d = v.asDouble();
    if (v.kind() == Value::Kind::Float && !std::isfinite(d))
      throw TemplateError("cannot convert float " + formatFloat(d) +
                          " to integer");
    int64_t i =
        v.kind() == Value::Kind::Float ? static_cast<int64_t>(d) : v.asInt();
    cSpec += std::string("ll") + (c == 'i' || c == 'u' ? 'd' : c);
    return cFormat(cSpec, static_cast<long long>(i));
  }
  cSpec.push_back(c);
  return cFormat(cSpec, v.asDouble());
}

std::string percentOne(const PercentSpec &spec, const Value &v) {
  switch (spec.conversion) {
  case 's':
  case 'r': {
    std::string text = spec.conversion == 's' ? toStr(v) : toRepr(v);
    if (spec.precision >= 0) {
      std::u32string cps = decodeUtf8(text);
      if (cps.size() > static_cast<size_t>(spec.precision))
        text = encodeUtf8(cps.substr(0, static_cast<size_t>(spec.precision)));
    }
    bool left = spec.flags.find('-') != std::string::npos;
    return pad(text, spec.width, ' ', left ? '<' : '>');
  }
  case 'c': {
    std::string text;
    if (v.isIntegral() && v.asInt() >= 0 && v.asInt() <= 0x10FFFF)
      appendUtf8(text, static_cast<char32_t>(v.asInt()));
    else if (v.isString() && codePointCount(v.asString()) == 1)
      text = v.asString();
    else
      throw TemplateError("%c requires int or char");
    bool left = spec.flags.find('-') != std::string::npos;
    return pad(text, spec.width, ' ', left ? '<' : '>');
  }
  default:
    return percentNumber(spec, v);
  }
}

/// The argument of one %-conversion: by %(key) from a dict, else the next
/// positional one.
class PercentArgs {
public:
  explicit PercentArgs(const Value &args) : args_(args) {
    if (args.kind() == Value::Kind::Tuple)
      positional_ = args.items();
    else
      positional_.push_back(args);
  }
  const Value &next() {
    if (used_ >= positional_.size())
      throw TemplateError("not enough arguments for format string");
    return positional_[used_++];
  }
  Value byKey(const std::string &key) {
    if (args_.kind() != Value::Kind::Dict)
      throw TemplateError("format requires a mapping");
    const Value *value = args_.asDict().find(key);
    if (!value)
      throw TemplateError("'" + key + "'");
    usedMapping_ = true;
    return *value;
  }
  void finish() const {
    bool mapping = args_.kind() == Value::Kind::Dict;
    if (used_ < positional_.size() && !usedMapping_ && !mapping)
      throw TemplateError(
          "not all arguments converted during string formatting");
  }

private:
  const Value &args_;
  std::vector<Value> positional_;
  size_t used_ = 0;
  bool usedMapping_ = false;
};

} // namespace

std::string percentFormat(const std::string &format, const Value &args) {
  PercentArgs arguments(args);
  std::string out;
  size_t i = 0;
  while (i < format.size()) {
    if (format[i] != '%') {
      out.push_back(format[i++]);
      continue;
    }
    if (++i >= format.size())
      throw TemplateError("incomplete format");
    std::optional<std::string> key;
    if (format[i] == '(') {
      size_t close = format.find(')', i);
      if (close == std::string::npos)
        throw TemplateError("incomplete format key");
      key = format.substr(i + 1, close - i - 1);
      i = close + 1;
    }
    PercentSpec spec;
    while (i < format.size() &&
           std::string("-+ #0").find(format[i]) != std::string::npos)
      spec.flags.push_back(format[i++]);
    spec.width = parseWidth(format, i);
    if (i < format.size() && format[i] == '.') {
      ++i;
      spec.precision = static_cast<int>(parseWidth(format, i));
    }
    while (i < format.size() &&
           (format[i] == 'l' || format[i] == 'h' || format[i] == 'L'))
      ++i;
    if (i >= format.size())
      throw TemplateError("incomplete format");
    spec.conversion = format[i++];
    if (spec.conversion == '%') {
      out.push_back('%');
      continue;
    }
    if (std::string("srcdiuxXofFeEgG").find(spec.conversion) ==
        std::string::npos)
      throw TemplateError(std::string("unsupported format character '") +
                          spec.conversion + "'");
    Value value = key ? arguments.byKey(*key) : arguments.next();
    out += percentOne(spec, value);
    checkStringSize(out.size());
  }
  arguments.finish();
  return out;
}

namespace {

/// A parsed format spec of str.format (Python's format-spec mini-language).
struct BraceSpec {
  char32_t fill = ' ';
  char align = 0;
  char sign = '-';
  bool alternate = false;
  size_t width = 0;
  char grouping = 0;
  int precision = -1;
  char type = 0;
};

BraceSpec parseBraceSpec(const std::string &text) {
  BraceSpec spec;
  std::u32string cps = decodeUtf8(text);
  size_t i = 0;
  auto isAlign = [](char32_t c) {
    return c == '<' || c == '>' || c == '^' || c == '=';
  };
  if (cps.size() >= 2 && isAlign(cps[1])) {
    spec.fill = cps[0];
    spec.align = static_cast<char>(cps[1]);
    i = 2;
  } else if (!cps.empty() && isAlign(cps[0])) {
    spec.align = static_cast<char>(cps[0]);
    i = 1;
  }
  std::string rest = encodeUtf8(cps.substr(i));
  size_t j = 0;
  if (j < rest.size() && (rest[j] == '+' || rest[j] == '-' || rest[j] == ' '))
    spec.sign = rest[j++];
  if (j < rest.size() && rest[j] == '#') {
    spec.alternate = true;
    ++j;
  }
  if (j < rest.size() && rest[j] == '0') {
    if (!spec.align) {
      spec.fill = '0';
      spec.align = '=';
    }
    ++j;
  }
  spec.width = parseWidth(rest, j);
  if (j < rest.size() && (rest[j] == ',' || rest[j] == '_'))
    spec.grouping = rest[j++];
  if (j < rest.size() && rest[j] == '.') {
    ++j;
    size_t start = j;
    spec.precision = static_cast<int>(parseWidth(rest, j));
    if (j == start)
      throw TemplateError("Format specifier missing precision");
  }
  if (j < rest.size())
    spec.type = rest[j++];
  if (j != rest.size())
    throw TemplateError("Invalid format specifier");
  return spec;
}

std::string group(const std::string &digits, char separator) {
  std::string out;
  size_t n = digits.size();
  for (size_t i = 0; i < n; ++i) {
    if (i && (n - i) % 3 == 0)
      out.push_back(separator);
    out.push_back(digits[i]);
  }
  return out;
}

/// Sign, digits (grouped) and padding of a formatted number.
std::string finishNumber(const BraceSpec &spec, bool negative,
                         std::string body) {
  if (spec.grouping) {
    size_t end = body.find_first_not_of("0123456789");
    std::string intPart = body.substr(0, end);
    body = group(intPart, spec.grouping) +
           (end == std::string::npos ? "" : body.substr(end));
  }
  std::string sign = negative           ? "-"
                     : spec.sign == '+' ? "+"
                     : spec.sign == ' ' ? " "
                                        : "";
  char align = spec.align ? spec.align : '>';
  if (align == '=') {
    size_t length = codePointCount(sign) + codePointCount(body);
    std::string fill;
    for (size_t i = length; i < spec.width; ++i)
      appendUtf8(fill, spec.fill);
    return sign + fill + body;
  }
  return pad(sign + body, spec.width, spec.fill, align);
}

std::string formatInteger(const BraceSpec &spec, int64_t value) {
  char type = spec.type ? spec.type : 'd';
  bool negative = value < 0;
  uint64_t magnitude = negative ? 0 - static_cast<uint64_t>(value)
                                : static_cast<uint64_t>(value);
  std::string body;
  if (type == 'd' || type == 'n') {
    body = std::to_string(magnitude);
  } else if (type == 'x' || type == 'X' || type == 'o' || type == 'b') {
    int base = type == 'o' ? 8 : type == 'b' ? 2 : 16;
    const char *digits = type == 'X' ? "0123456789ABCDEF" : "0123456789abcdef";
    do {
      body.insert(body.begin(), digits[magnitude % base]);
      magnitude /= base;
    } while (magnitude);
    if (spec.alternate)
      body = std::string("0") + type + body;
  } else if (type == 'c') {
    appendUtf8(body, static_cast<char32_t>(value));
    return pad(body, spec.width, spec.fill, spec.align ? spec.align : '<');
  } else {
    throw TemplateError(std::string("Unknown format code '") + type +
                        "' for object of type 'int'");
  }
  return finishNumber(spec, negative, body);
}

std::string formatReal(const BraceSpec &spec, double value) {
  char type = spec.type;
  bool negative = std::signbit(value) && !std::isnan(value);
  double magnitude = std::fabs(value);
  std::string body;
  if (!type && spec.precision < 0) {
    body = formatFloat(magnitude);
  } else if (type == '%') {
    body =
        cFormat("%." + std::to_string(spec.precision < 0 ? 6 : spec.precision) +
                    "f",
                magnitude * 100) +
        "%";
  } else {
    char cType = type ? type : 'g';
    if (std::string("eEfFgG").find(cType) == std::string::npos)
      throw TemplateError(std::string("Unknown format code '") + type +
                          "' for object of type 'float'");
    int precision = spec.precision < 0 ? 6 : spec.precision;
    body = cFormat(std::string("%") + (spec.alternate ? "#" : "") + "." +
                       std::to_string(precision) + cType,
                   magnitude);
  }
  return finishNumber(spec, negative, body);
}

std::string formatWithSpec(const Value &value, const std::string &specText) {
  if (specText.empty())
    return toStr(value);
  BraceSpec spec = parseBraceSpec(specText);
  if (value.isString()) {
    if (spec.type && spec.type != 's')
      throw TemplateError(std::string("Unknown format code '") + spec.type +
                          "' for object of type 'str'");
    std::string text = value.asString();
    if (spec.precision >= 0) {
      std::u32string cps = decodeUtf8(text);
      if (cps.size() > static_cast<size_t>(spec.precision))
        text = encodeUtf8(cps.substr(0, static_cast<size_t>(spec.precision)));
    }
    return pad(text, spec.width, spec.fill, spec.align ? spec.align : '<');
  }
  if (value.isIntegral()) {
    if (spec.type &&
        std::string("eEfFgG%").find(spec.type) != std::string::npos)
      return formatReal(spec, value.asDouble());
    return formatInteger(spec, value.asInt());
  }
  if (value.kind() == Value::Kind::Float)
    return formatReal(spec, value.asDouble());
  throw TemplateError("unsupported format string passed to " + typeName(value) +
                      ".__format__");
}

/// Resolves a field name ("0", "name", "0.attr", "name[key]") against the
/// call's arguments.
class FieldResolver {
public:
  explicit FieldResolver(const CallArgs &args) : args_(args) {}

  Value resolve(const std::string &field) {
    size_t end = field.find_first_of(".[");
    std::string first = field.substr(0, end);
    Value value = lookupFirst(first);
    size_t i = end;
    while (i != std::string::npos && i < field.size()) {
      if (field[i] == '.') {
        size_t next = field.find_first_of(".[", i + 1);
        value = getAttribute(value, field.substr(i + 1, next - i - 1));
        i = next;
      } else {
        size_t close = field.find(']', i);
        if (close == std::string::npos)
          throw TemplateError("Missing ']' in format string");
        std::string key = field.substr(i + 1, close - i - 1);
        bool numeric = !key.empty() &&
                       key.find_first_not_of("0123456789") == std::string::npos;
        value = getItem(value, numeric ? Value::integer(std::stoll(key))
                                       : Value::string(key));
        i = close + 1;
      }
    }
    return value;
  }

private:
  Value lookupFirst(const std::string &first) {
    if (first.empty() ||
        first.find_first_not_of("0123456789") == std::string::npos) {
      size_t index;
      if (first.empty()) {
        if (manual_)
          throw TemplateError("cannot switch from manual field specification "
                              "to automatic field numbering");
        automatic_ = true;
        index = next_++;
      } else {
        if (automatic_)
          throw TemplateError("cannot switch from automatic field numbering "
                              "to manual field specification");
        manual_ = true;
        index = std::stoul(first);
      }
      if (index >= args_.positional.size())
        throw TemplateError("Replacement index " + std::to_string(index) +
                            " out of range for positional args tuple");
      return args_.positional[index];
    }
    for (const auto &[name, value] : args_.keyword)
      if (name == first)
        return value;
    throw TemplateError("'" + first + "'");
  }

  const CallArgs &args_;
  size_t next_ = 0;
  bool automatic_ = false;
  bool manual_ = false;
};

} // namespace

std::string braceFormat(const std::string &format, const CallArgs &args) {
  FieldResolver resolver(args);
  std::string out;
  for (size_t i = 0; i < format.size();) {
    char c = format[i];
    if (c == '}') {
      if (i + 1 >= format.size() || format[i + 1] != '}')
        throw TemplateError("Single '}' encountered in format string");
      out.push_back('}');
      i += 2;
      continue;
    }
    if (c != '{') {
      out.push_back(c);
      ++i;
      continue;
    }
    if (i + 1 < format.size() && format[i + 1] == '{') {
      out.push_back('{');
      i += 2;
      continue;
    }
    size_t close = format.find('}', i);
    if (close == std::string::npos)
      throw TemplateError("Single '{' encountered in format string");
    std::string field = format.substr(i + 1, close - i - 1);
    if (field.find('{') != std::string::npos)
      throw TemplateError("nested replacement fields are not supported");
    std::string spec, conversion;
    if (size_t colon = field.find(':'); colon != std::string::npos) {
      spec = field.substr(colon + 1);
      field.resize(colon);
    }
    if (size_t bang = field.find('!'); bang != std::string::npos) {
      conversion = field.substr(bang + 1);
      field.resize(bang);
    }
    Value value = resolver.resolve(field);
    if (conversion == "r")
      value = Value::string(toRepr(value));
    else if (conversion == "s")
      value = Value::string(toStr(value));
    else if (!conversion.empty())
      throw TemplateError("Unknown conversion specifier " + conversion);
    out += formatWithSpec(value, spec);
    checkStringSize(out.size());
    i = close + 1;
  }
  return out;
}

} // namespace cohere2c::text::jinja
