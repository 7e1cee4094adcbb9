//===- Regex.cpp - Oniguruma-compatible regular expressions over PCRE2 ----===//
#include "text/tokenizer/Regex.h"

#include <pcre2.h>

namespace cohere2c::text {

namespace {

/// Oniguruma's \s (White_Space) as the inside of a PCRE2 class.
constexpr std::string_view kSpaceClassBody = "\\t-\\r\\x{85}\\p{Z}";

/// Escapes whose PCRE2 meaning is not Oniguruma's (with Unicode UTF-8):
/// \h is a hex digit there, \w takes all numbers and marks, \v is one
/// character; \R \X \K \N have no single equivalent.
bool isUntranslatedEscape(char c) {
  return std::string_view("hHvVwWbBRXKN").find(c) != std::string_view::npos;
}

/// Per-thread PCRE2 state: the match data holds the one range findAll reads.
/// JIT code runs on PCRE2's default 32 KiB machine stack, enough for the
/// tokenizer patterns (their repeats are single characters).
struct MatchData {
  pcre2_match_data *data = pcre2_match_data_create(1, nullptr);
  ~MatchData() { pcre2_match_data_free(data); }
};

} // namespace

StatusOr<std::string> translateOnigurumaPattern(std::string_view pattern) {
  std::string out;
  bool inClass = false;
  for (size_t i = 0; i < pattern.size(); ++i) {
    char c = pattern[i];
    if (c == '\\' && i + 1 < pattern.size()) {
      char e = pattern[++i];
      if (isUntranslatedEscape(e) || (inClass && e == 'S'))
        return Status::error("regex '" + std::string(pattern) +
                             "': unsupported escape \\" + e + " at offset " +
                             std::to_string(i - 1));
      if (e == 's')
        out += inClass ? std::string(kSpaceClassBody)
                       : "[" + std::string(kSpaceClassBody) + "]";
      else if (e == 'S' && !inClass)
        out += "[^" + std::string(kSpaceClassBody) + "]";
      else
        (out += '\\') += e;
      continue;
    }
    if (!inClass && c == '[') {
      inClass = true;
      out += c;
      // A ']' right after "[" or "[^" is a literal member.
      if (i + 1 < pattern.size() && pattern[i + 1] == '^')
        out += pattern[++i];
      if (i + 1 < pattern.size() && pattern[i + 1] == ']')
        out += pattern[++i];
      continue;
    }
    if (inClass && c == '[' && pattern.substr(i, 2) == "[:") {
      size_t end = pattern.find(":]", i + 2);
      if (end != std::string_view::npos) {
        out.append(pattern.substr(i, end + 2 - i));
        i = end + 1;
        continue;
      }
    }
    if (inClass && c == ']')
      inClass = false;
    out += c;
  }
  return out;
}

StatusOr<std::unique_ptr<Regex>> Regex::compile(const std::string &pattern) {
  int errorCode = 0;
  PCRE2_SIZE errorOffset = 0;
  pcre2_code *code = pcre2_compile(reinterpret_cast<PCRE2_SPTR>(pattern.data()),
                                   pattern.size(), PCRE2_UTF | PCRE2_UCP,
                                   &errorCode, &errorOffset, nullptr);
  if (!code) {
    PCRE2_UCHAR message[256];
    pcre2_get_error_message(errorCode, message, sizeof(message));
    return Status::error("regex '" + pattern + "' at offset " +
                         std::to_string(errorOffset) + ": " +
                         reinterpret_cast<const char *>(message));
  }
  bool jit = pcre2_jit_compile(code, PCRE2_JIT_COMPLETE) == 0;
  return std::unique_ptr<Regex>(new Regex(code, jit));
}

Regex::~Regex() { pcre2_code_free(code_); }

Status Regex::findAll(std::string_view subject,
                      std::vector<std::pair<size_t, size_t>> &matches) const {
  thread_local MatchData matchData;
  auto text = reinterpret_cast<PCRE2_SPTR>(subject.data());
  size_t start = 0;
  bool havePrevious = false;
  size_t previousEnd = 0;
  while (start <= subject.size()) {
    // The subject was checked (or produced) as valid UTF-8.
    int rc = jit_ ? pcre2_jit_match(code_, text, subject.size(), start,
                                    PCRE2_NO_UTF_CHECK, matchData.data, nullptr)
                  : pcre2_match(code_, text, subject.size(), start,
                                PCRE2_NO_UTF_CHECK, matchData.data, nullptr);
    if (rc == PCRE2_ERROR_NOMATCH)
      break;
    if (rc < 0) {
      PCRE2_UCHAR message[256];
      pcre2_get_error_message(rc, message, sizeof(message));
      return Status::error(std::string("regex match failed: ") +
                           reinterpret_cast<const char *>(message));
    }
    const PCRE2_SIZE *range = pcre2_get_ovector_pointer(matchData.data);
    size_t begin = range[0], end = range[1];
    if (begin == end && havePrevious && previousEnd == end) {
      if (start == subject.size())
        break;
      // Step over one character, as the onig crate does.
      do
        ++start;
      while (start < subject.size() &&
             (uint8_t(subject[start]) & 0xC0) == 0x80);
      continue;
    }
    matches.emplace_back(begin, end);
    havePrevious = true;
    previousEnd = end;
    start = end;
  }
  return Status::success();
}

} // namespace cohere2c::text
