//===- PyString.cpp - Python's str methods over UTF-8 ---------------------===//
#include "text/chat_template/PyString.h"

#include "text/chat_template/Error.h"
#include "text/chat_template/Unicode.h"
#include "text/chat_template/Value.h"

#include <algorithm>

namespace cohere2c::text::jinja::pystr {

std::string upper(std::string_view s) {
  return encodeUtf8(toUpper(decodeUtf8(s)));
}

std::string lower(std::string_view s) {
  return encodeUtf8(toLower(decodeUtf8(s)));
}

std::string title(std::string_view s) {
  std::u32string out;
  bool previousCased = false;
  for (char32_t c : decodeUtf8(s)) {
    out += previousCased ? toLower(std::u32string(1, c)) : toTitle(c);
    previousCased = isCased(c);
  }
  return encodeUtf8(out);
}

std::string capitalize(std::string_view s) {
  std::u32string text = decodeUtf8(s);
  if (text.empty())
    return "";
  return encodeUtf8(toTitle(text[0]) +
                    toLower(std::u32string_view(text).substr(1)));
}

std::string strip(std::string_view s, const std::optional<std::string> &chars,
                  Side side) {
  std::u32string text = decodeUtf8(s);
  std::u32string set = chars ? decodeUtf8(*chars) : std::u32string();
  auto stripped = [&](char32_t c) {
    return chars ? set.find(c) != std::u32string::npos : isSpace(c);
  };
  size_t begin = 0, end = text.size();
  if (side != Side::Right)
    while (begin < end && stripped(text[begin]))
      ++begin;
  if (side != Side::Left)
    while (end > begin && stripped(text[end - 1]))
      --end;
  return encodeUtf8(std::u32string_view(text).substr(begin, end - begin));
}

namespace {

std::vector<std::string> splitWhitespace(std::u32string_view text,
                                         int64_t maxsplit, bool fromRight) {
  std::vector<std::u32string> parts;
  std::u32string t(text);
  if (fromRight)
    std::reverse(t.begin(), t.end());
  size_t i = 0, n = t.size();
  while (true) {
    while (i < n && isSpace(t[i]))
      ++i;
    if (i == n)
      break;
    if (maxsplit == 0) {
      parts.push_back(t.substr(i));
      break;
    }
    size_t j = i;
    while (j < n && !isSpace(t[j]))
      ++j;
    parts.push_back(t.substr(i, j - i));
    --maxsplit;
    i = j;
  }
  std::vector<std::string> out;
  for (std::u32string &part : parts) {
    if (fromRight)
      std::reverse(part.begin(), part.end());
    out.push_back(encodeUtf8(part));
  }
  if (fromRight)
    std::reverse(out.begin(), out.end());
  return out;
}

} // namespace

std::vector<std::string> split(std::string_view s,
                               const std::optional<std::string> &sep,
                               int64_t maxsplit, bool fromRight) {
  if (!sep)
    return splitWhitespace(decodeUtf8(s), maxsplit, fromRight);
  if (sep->empty())
    throw TemplateError("empty separator");
  std::vector<std::string> parts;
  std::string_view rest = s;
  while (maxsplit != 0) {
    size_t at = fromRight ? rest.rfind(*sep) : rest.find(*sep);
    if (at == std::string_view::npos)
      break;
    if (fromRight) {
      parts.emplace_back(rest.substr(at + sep->size()));
      rest = rest.substr(0, at);
    } else {
      parts.emplace_back(rest.substr(0, at));
      rest = rest.substr(at + sep->size());
    }
    --maxsplit;
  }
  parts.emplace_back(rest);
  if (fromRight)
    std::reverse(parts.begin(), parts.end());
  return parts;
}

std::string replace(std::string_view s, std::string_view old,
                    std::string_view replacement, int64_t count) {
  std::string out;
  if (old.empty()) {
    std::u32string text = decodeUtf8(s);
    for (size_t i = 0; i <= text.size(); ++i) {
      if (count < 0 || static_cast<int64_t>(i) < count)
        out += replacement;
      if (i < text.size())
        appendUtf8(out, text[i]);
      checkStringSize(out.size());
    }
    return out;
  }
  size_t pos = 0;
  while (count != 0) {
    size_t at = s.find(old, pos);
    if (at == std::string_view::npos)
      break;
    out += s.substr(pos, at - pos);
    out += replacement;
    checkStringSize(out.size());
    pos = at + old.size();
    --count;
  }
  out += s.substr(pos);
  checkStringSize(out.size());
  return out;
}

int64_t find(std::string_view s, std::string_view sub, bool fromRight) {
  size_t at = fromRight ? s.rfind(sub) : s.find(sub);
  if (at == std::string_view::npos)
    return -1;
  return static_cast<int64_t>(codePointCount(s.substr(0, at)));
}

int64_t count(std::string_view s, std::string_view sub) {
  if (sub.empty())
    return static_cast<int64_t>(codePointCount(s)) + 1;
  int64_t n = 0;
  for (size_t at = s.find(sub); at != std::string_view::npos;
       at = s.find(sub, at + sub.size()))
    ++n;
  return n;
}

std::string justify(std::string_view s, int64_t width, std::string_view fill,
                    char align) {
  if (codePointCount(fill) != 1)
    throw TemplateError("The fill character must be exactly one character "
                        "long");
  int64_t length = static_cast<int64_t>(codePointCount(s));
  if (width <= length)
    return std::string(s);
  checkStringSize(static_cast<size_t>(width));
  checkStringSize(static_cast<size_t>(width) * fill.size());
  int64_t margin = width - length;
  int64_t left = align == '<'   ? 0
                 : align == '>' ? margin
                                : margin / 2 + (margin & width & 1);
  std::string out;
  for (int64_t i = 0; i < left; ++i)
    out += fill;
  out += s;
  for (int64_t i = left; i < margin; ++i)
    out += fill;
  return out;
}

} // namespace cohere2c::text::jinja::pystr
