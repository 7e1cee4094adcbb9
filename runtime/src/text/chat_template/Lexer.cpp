//===- Lexer.cpp - Tokens of a chat template
//-------------------------------===//
#include "text/chat_template/Lexer.h"

#include "text/chat_template/Unicode.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdint>
#include <cstdlib>

namespace cohere2c::text::jinja {

namespace {

/// \r\n and \r become \n; one trailing newline goes (jinja2's tokeniter).
std::string normalizeNewlines(std::string_view source) {
  std::string out;
  out.reserve(source.size());
  for (size_t i = 0; i < source.size(); ++i) {
    if (source[i] == '\r') {
      out.push_back('\n');
      if (i + 1 < source.size() && source[i + 1] == '\n')
        ++i;
    } else {
      out.push_back(source[i]);
    }
  }
  if (!out.empty() && out.back() == '\n')
    out.pop_back();
  return out;
}

bool isContinuationByte(char c) {
  return (static_cast<unsigned char>(c) & 0xC0) == 0x80;
}

/// The code point starting at s[i] and its length in bytes.
char32_t codePointAt(std::string_view s, size_t i, size_t &length) {
  length = 1;
  while (i + length < s.size() && length < 4 &&
         isContinuationByte(s[i + length]))
    ++length;
  std::u32string decoded = decodeUtf8(s.substr(i, length));
  length = encodeUtf8(decoded.substr(0, 1)).size();
  return decoded[0];
}

/// Length of `s` without its trailing whitespace (Python's str.rstrip()).
size_t rstrippedLength(std::string_view s) {
  size_t end = s.size();
  while (end > 0) {
    size_t start = end - 1;
    while (start > 0 && isContinuationByte(s[start]))
      --start;
    size_t length;
    if (!isSpace(codePointAt(s, start, length)))
      break;
    end = start;
  }
  return end;
}

/// Whether `s` is non-empty and all whitespace (re.fullmatch(r"\s+", s)).
bool allWhitespace(std::string_view s) {
  if (s.empty())
    return false;
  for (size_t i = 0, length; i < s.size(); i += length)
    if (!isSpace(codePointAt(s, i, length)))
      return false;
  return true;
}

constexpr const char *kOperators[] = {
    "//", "**", "==", "!=", ">=", "<=", "+", "-", "/", "*", "%", "~", "[",
    "]",  "(",  ")",  "{",  "}",  ">",  "<", "=", ".", ":", "|", ",", ";"};

class Lexer {
public:
  explicit Lexer(std::string_view source) : src_(normalizeNewlines(source)) {
    lineStarts_.push_back(0);
    for (size_t i = 0; i < src_.size(); ++i)
      if (src_[i] == '\n')
        lineStarts_.push_back(i + 1);
  }

  std::vector<Token> run();

private:
  SourceLoc locAt(size_t pos) const {
    auto it = std::upper_bound(lineStarts_.begin(), lineStarts_.end(), pos);
    size_t line = static_cast<size_t>(it - lineStarts_.begin());
    size_t start = lineStarts_[line - 1];
    size_t column =
        codePointCount(std::string_view(src_).substr(start, pos - start));
    return {static_cast<uint32_t>(line), static_cast<uint32_t>(column + 1)};
  }
  [[noreturn]] void fail(const std::string &message, size_t pos) const {
    throw TemplateError(message, locAt(pos));
  }
  void emit(Token::Type type, std::string text, size_t pos) {
    Token token;
    token.type = type;
    token.text = std::move(text);
    token.loc = locAt(pos);
    tokens_.push_back(std::move(token));
  }
  void emitData(std::string_view text, size_t pos) {
    if (!text.empty())
      emit(Token::Type::Data, std::string(text), pos);
  }
  /// Applies {%- / lstrip_blocks to the text before a tag.
  std::string_view stripBeforeTag(std::string_view text, char sign,
                                  bool isVariable) const;
  size_t skipWhitespace(size_t pos) const;
  /// The end of a block tag's or comment's closing (after trim_blocks'
  /// newline or -'s whitespace); `sign` is the character before it.
  size_t afterClosing(size_t closeEnd, char sign) const;
  size_t lexRaw(size_t pos, size_t tagStart);
  size_t lexComment(size_t pos);
  size_t lexTag(size_t pos, bool isBlock);
  size_t lexToken(size_t pos);
  size_t lexNumber(size_t pos);
  size_t lexString(size_t pos);

  std::string src_;
  std::vector<size_t> lineStarts_;
  std::vector<Token> tokens_;
  std::vector<char> brackets_;
  /// Whether the last match ended with a newline (jinja2's line_starting).
  bool lineStarting_ = true;
};

std::string_view Lexer::stripBeforeTag(std::string_view text, char sign,
                                       bool isVariable) const {
  if (sign == '-')
    return text.substr(0, rstrippedLength(text));
  if (sign == '+' || isVariable)
    return text;
  size_t lineStart = text.rfind('\n');
  lineStart = lineStart == std::string_view::npos ? 0 : lineStart + 1;
  if ((lineStart > 0 || lineStarting_) && allWhitespace(text.substr(lineStart)))
    return text.substr(0, lineStart);
  return text;
}

size_t Lexer::skipWhitespace(size_t pos) const {
  size_t length;
  while (pos < src_.size() && isSpace(codePointAt(src_, pos, length)))
    pos += length;
  return pos;
}

size_t Lexer::afterClosing(size_t closeEnd, char sign) const {
  if (sign == '-')
    return skipWhitespace(closeEnd);
  if (sign != '+' && closeEnd < src_.size() && src_[closeEnd] == '\n')
    return closeEnd + 1;
  return closeEnd;
}

/// Matches "{%" [-+] \s* NAME \s* ("-%}" \s* | "%}") at pos for raw begin
/// (which trim_blocks does not apply to) and returns its end, or npos.
size_t matchRawBegin(std::string_view src, size_t pos) {
  size_t i = pos + 2;
  if (i < src.size() && (src[i] == '-' || src[i] == '+'))
    ++i;
  while (i < src.size() && std::isspace(static_cast<unsigned char>(src[i])))
    ++i;
  if (src.substr(i, 3) != "raw")
    return std::string_view::npos;
  i += 3;
  while (i < src.size() && std::isspace(static_cast<unsigned char>(src[i])))
    ++i;
  if (src.substr(i, 3) == "-%}") {
    i += 3;
    while (i < src.size() && std::isspace(static_cast<unsigned char>(src[i])))
      ++i;
    return i;
  }
  return src.substr(i, 2) == "%}" ? i + 2 : std::string_view::npos;
}

size_t Lexer::lexRaw(size_t pos, size_t tagStart) {
  for (size_t at = src_.find("{%", pos); at != std::string::npos;
       at = src_.find("{%", at + 1)) {
    size_t i = at + 2;
    char sign = 0;
    if (i < src_.size() && (src_[i] == '-' || src_[i] == '+'))
      sign = src_[i++];
    while (i < src_.size() && std::isspace(static_cast<unsigned char>(src_[i])))
      ++i;
    if (src_.compare(i, 6, "endraw") != 0)
      continue;
    i += 6;
    while (i < src_.size() && std::isspace(static_cast<unsigned char>(src_[i])))
      ++i;
    char closeSign = 0;
    if (i < src_.size() && (src_[i] == '-' || src_[i] == '+'))
      closeSign = src_[i++];
    if (src_.compare(i, 2, "%}") != 0)
      continue;
    emitData(stripBeforeTag(std::string_view(src_).substr(pos, at - pos), sign,
                            false),
             pos);
    size_t end = afterClosing(i + 2, closeSign);
    lineStarting_ = src_[end - 1] == '\n';
    return end;
  }
  fail("Missing end of raw directive", tagStart);
}

size_t Lexer::lexComment(size_t pos) {
  size_t close = src_.find("#}", pos);
  if (close == std::string::npos)
    fail("Missing end of comment tag", pos);
  char sign = close > pos ? src_[close - 1] : 0;
  size_t end = afterClosing(close + 2, sign);
  lineStarting_ = src_[end - 1] == '\n';
  return end;
}

size_t Lexer::lexTag(size_t pos, bool isBlock) {
  const char *close = isBlock ? "%}" : "}}";
  while (true) {
    if (pos >= src_.size())
      return pos;
    if (brackets_.empty()) {
      char sign = src_[pos];
      bool signed_ = (sign == '-' || (isBlock && sign == '+')) &&
                     src_.compare(pos + 1, 2, close) == 0;
      if (signed_ || src_.compare(pos, 2, close) == 0) {
        emit(isBlock ? Token::Type::BlockEnd : Token::Type::VariableEnd, "",
             pos);
        size_t closeEnd = pos + (signed_ ? 3 : 2);
        size_t end = isBlock || signed_
                         ? afterClosing(closeEnd, signed_ ? sign : 0)
                         : closeEnd;
        lineStarting_ = src_[end - 1] == '\n';
        return end;
      }
    }
    pos = lexToken(pos);
  }
}

size_t Lexer::lexToken(size_t pos) {
  size_t length;
  char32_t c = codePointAt(src_, pos, length);
  if (isSpace(c))
    return skipWhitespace(pos);
  if (c < 0x80 && std::isdigit(static_cast<int>(c)))
    return lexNumber(pos);
  if (isIdentifierStart(c)) {
    size_t end = pos + length;
    while (end < src_.size() &&
           isIdentifierContinue(codePointAt(src_, end, length)))
      end += length;
    emit(Token::Type::Name, src_.substr(pos, end - pos), pos);
    return end;
  }
  if (c == '\'' || c == '"')
    return lexString(pos);
  for (const char *op : kOperators) {
    size_t n = std::char_traits<char>::length(op);
    if (src_.compare(pos, n, op) != 0)
      continue;
    char ch = op[0];
    if (n == 1 && (ch == '(' || ch == '[' || ch == '{')) {
      brackets_.push_back(ch == '(' ? ')' : ch == '[' ? ']' : '}');
    } else if (n == 1 && (ch == ')' || ch == ']' || ch == '}')) {
      if (brackets_.empty())
        fail(std::string("unexpected '") + ch + "'", pos);
      if (brackets_.back() != ch)
        fail(std::string("unexpected '") + ch + "', expected '" +
                 brackets_.back() + "'",
             pos);
      brackets_.pop_back();
    }
    emit(Token::Type::Operator, op, pos);
    return pos + n;
  }
  std::string shown;
  appendUtf8(shown, c);
  fail("unexpected char '" + shown + "'", pos);
}

/// The length of a match of `pattern` at s[pos] for the digit runs of
/// jinja2's number regexes: (digit+ '_')* digit+, with `isDigit` choosing
/// the digits; 0 when there is none.
template <typename IsDigit>
size_t digitRun(std::string_view s, size_t pos, IsDigit isDigit) {
  size_t end = pos;
  while (end < s.size() && isDigit(s[end])) {
    ++end;
    while (end < s.size() && isDigit(s[end]))
      ++end;
    if (end + 1 < s.size() && s[end] == '_' && isDigit(s[end + 1]))
      ++end;
    else
      break;
  }
  return end - pos;
}

bool isDecimal(char c) { return c >= '0' && c <= '9'; }

/// jinja2's float_re at pos (case-insensitive):
///   (?<!\.)(\d+_)*\d+((\.(\d+_)*\d+)?e[+\-]?(\d+_)*\d+|\.(\d+_)*\d+)
/// Returns the match length, or 0.
size_t matchFloat(std::string_view s, size_t pos) {
  if (pos > 0 && s[pos - 1] == '.')
    return 0;
  size_t end = pos + digitRun(s, pos, isDecimal);
  if (end == pos)
    return 0;
  bool fraction = false;
  if (end + 1 < s.size() && s[end] == '.') {
    size_t digits = digitRun(s, end + 1, isDecimal);
    if (digits) {
      end += 1 + digits;
      fraction = true;
    }
  }
  if (end < s.size() && (s[end] == 'e' || s[end] == 'E')) {
    size_t at = end + 1;
    if (at < s.size() && (s[at] == '+' || s[at] == '-'))
      ++at;
    if (size_t digits = digitRun(s, at, isDecimal))
      return at + digits - pos;
  }
  return fraction ? end - pos : 0;
}

/// jinja2's integer_re at pos (case-insensitive):
///   0b(_?[01])+ | 0o(_?[0-7])+ | 0x(_?[\da-f])+ | [1-9](_?\d)* | 0(_?0)*
/// Returns the match length and the base, or 0.
size_t matchInteger(std::string_view s, size_t pos, int &base) {
  auto run = [&](size_t at, auto isDigit) {
    size_t end = at;
    while (true) {
      size_t next = end < s.size() && s[end] == '_' ? end + 1 : end;
      if (next >= s.size() || !isDigit(s[next]))
        return end;
      end = next + 1;
    }
  };
  if (s[pos] == '0' && pos + 1 < s.size()) {
    char prefix = static_cast<char>(std::tolower(s[pos + 1]));
    base = prefix == 'b' ? 2 : prefix == 'o' ? 8 : prefix == 'x' ? 16 : 0;
    if (base) {
      size_t end = run(pos + 2, [&](char c) {
        return base == 16 ? std::isxdigit(static_cast<unsigned char>(c)) != 0
                          : c >= '0' && c < '0' + base;
      });
      if (end > pos + 2)
        return end - pos;
    }
  }
  base = 10;
  if (s[pos] == '0')
    return run(pos + 1, [](char c) { return c == '0'; }) - pos;
  return run(pos + 1, isDecimal) - pos;
}

/// Python's int(text, 0) of a matched integer (underscores dropped).
int64_t integerValue(std::string_view text, int base) {
  uint64_t value = 0;
  for (size_t i = base == 10 ? 0 : 2; i < text.size(); ++i) {
    if (text[i] == '_')
      continue;
    int digit = std::isdigit(static_cast<unsigned char>(text[i]))
                    ? text[i] - '0'
                    : std::tolower(text[i]) - 'a' + 10;
    if (value > (uint64_t(INT64_MAX) - digit) / base)
      throw TemplateError("integer literal beyond 64 bits: " +
                          std::string(text));
    value = value * base + digit;
  }
  return static_cast<int64_t>(value);
}

/// Appends the escape sequence at body[i] (after the backslash) decoded as
/// Python's "unicode-escape" codec does; advances i past it.
void appendEscape(std::string &out, std::string_view body, size_t &i) {
  char c = body[i++];
  switch (c) {
  case '\n':
    return;
  case '\\':
  case '\'':
  case '"':
    out.push_back(c);
    return;
  case 'a':
    out.push_back('\a');
    return;
  case 'b':
    out.push_back('\b');
    return;
  case 'f':
    out.push_back('\f');
    return;
  case 'n':
    out.push_back('\n');
    return;
  case 'r':
    out.push_back('\r');
    return;
  case 't':
    out.push_back('\t');
    return;
  case 'v':
    out.push_back('\v');
    return;
  default:
    break;
  }
  if (c >= '0' && c <= '7') {
    unsigned value = c - '0';
    for (int k = 0;
         k < 2 && i < body.size() && body[i] >= '0' && body[i] <= '7'; ++k)
      value = value * 8 + (body[i++] - '0');
    appendUtf8(out, value);
    return;
  }
  int digits = c == 'x' ? 2 : c == 'u' ? 4 : c == 'U' ? 8 : 0;
  if (digits == 0) {
    // An unknown escape keeps its backslash, as Python's codec does.
    out.push_back('\\');
    --i;
    return;
  }
  uint32_t value = 0;
  for (int k = 0; k < digits; ++k, ++i) {
    if (i >= body.size() || !std::isxdigit(static_cast<unsigned char>(body[i])))
      throw TemplateError(std::string("truncated \\") + c + "XX escape");
    char h = static_cast<char>(std::tolower(body[i]));
    value =
        value * 16 +
        (std::isdigit(static_cast<unsigned char>(h)) ? h - '0' : h - 'a' + 10);
  }
  if (value > 0x10FFFF)
    throw TemplateError("illegal Unicode character");
  appendUtf8(out, value);
}

size_t Lexer::lexNumber(size_t pos) {
  if (size_t length = matchFloat(src_, pos)) {
    std::string text;
    for (char c : std::string_view(src_).substr(pos, length))
      if (c != '_')
        text.push_back(c);
    emit(Token::Type::Float, src_.substr(pos, length), pos);
    tokens_.back().real = std::strtod(text.c_str(), nullptr);
    return pos + length;
  }
  int base;
  size_t length = matchInteger(src_, pos, base);
  std::string_view text = std::string_view(src_).substr(pos, length);
  int64_t value;
  try {
    value = integerValue(text, base);
  } catch (TemplateError &error) {
    fail(error.message(), pos);
  }
  emit(Token::Type::Integer, std::string(text), pos);
  tokens_.back().integer = value;
  return pos + length;
}

size_t Lexer::lexString(size_t pos) {
  char quote = src_[pos];
  size_t end = pos + 1;
  while (end < src_.size() && src_[end] != quote)
    end += src_[end] == '\\' ? 2 : 1;
  if (end >= src_.size())
    fail(std::string("unexpected char '") + quote + "'", pos);
  std::string_view body = std::string_view(src_).substr(pos + 1, end - pos - 1);
  std::string value;
  try {
    for (size_t i = 0; i < body.size();) {
      if (body[i] != '\\')
        value.push_back(body[i++]);
      else
        appendEscape(value, body, ++i);
    }
  } catch (TemplateError &error) {
    fail(error.message(), pos);
  }
  emit(Token::Type::String, std::move(value), pos);
  return end + 1;
}

} // namespace

std::vector<Token> tokenize(std::string_view source) {
  return Lexer(source).run();
}

std::vector<Token> Lexer::run() {
  size_t pos = 0;
  while (pos < src_.size()) {
    size_t tag = pos;
    while ((tag = src_.find('{', tag)) != std::string::npos &&
           (tag + 1 >= src_.size() ||
            (src_[tag + 1] != '%' && src_[tag + 1] != '{' &&
             src_[tag + 1] != '#')))
      ++tag;
    if (tag == std::string::npos) {
      emitData(std::string_view(src_).substr(pos), pos);
      break;
    }
    char kind = src_[tag + 1];
    size_t afterOpen = tag + 2;
    char sign = 0;
    if (afterOpen < src_.size() &&
        (src_[afterOpen] == '-' || src_[afterOpen] == '+'))
      sign = src_[afterOpen++];
    std::string_view text = std::string_view(src_).substr(pos, tag - pos);
    emitData(stripBeforeTag(text, sign, kind == '{'), pos);
    if (kind == '%') {
      if (size_t rawEnd = matchRawBegin(src_, tag);
          rawEnd != std::string_view::npos) {
        lineStarting_ = src_[rawEnd - 1] == '\n';
        pos = lexRaw(rawEnd, tag);
        continue;
      }
    }
    if (kind == '#') {
      pos = lexComment(afterOpen);
      continue;
    }
    emit(kind == '%' ? Token::Type::BlockBegin : Token::Type::VariableBegin, "",
         tag);
    pos = lexTag(afterOpen, kind == '%');
  }
  emit(Token::Type::Eof, "", src_.size());
  return std::move(tokens_);
}

} // namespace cohere2c::text::jinja
