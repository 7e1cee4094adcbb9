//===- RequestsFile.cpp ---------------------------------------------------===//

#include "RequestsFile.h"

#include "Artifact/TextFiles.h"
#include "Support/Json.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <functional>
#include <map>
#include <optional>
#include <sys/stat.h>

namespace cohere2c {

namespace {

using json = nlohmann::ordered_json;

constexpr const char *kFields[] = {
    "id",          "prompt_ids", "prompt",         "messages",
    "documents",   "tools",      "max_new_tokens", "logits_from",
    "temperature", "top_k",      "top_p",          "seed"};

/// One line's request, checked field by field; `where` is "FILE:LINE".
class LineReader {
public:
  LineReader(const json &j, const std::string &where, const ModelText *text)
      : j(j), where(where), text(text) {}

  Status read(OwnedRequest &r) {
    for (auto &field : j.items())
      if (std::find(std::begin(kFields), std::end(kFields), field.key()) ==
          std::end(kFields))
        return error(
            "unknown field '" + excerpt(field.key()) +
            "' (expected id, prompt_ids, prompt, messages, documents, tools, "
            "max_new_tokens, logits_from, temperature, top_k, top_p, seed)");
    for (Status s :
         {promptOf(r), maxNewTokensOf(r), logitsFromOf(r), samplingOf(r)})
      if (!s.ok())
        return s;
    return Status::success();
  }

private:
  Status error(const std::string &message) const {
    return Status::error(where + ": " + message);
  }

  Status promptOf(OwnedRequest &r) const {
    int given = j.contains("prompt_ids") + j.contains("prompt") +
                j.contains("messages");
    if (given != 1)
      return error("give exactly one of prompt_ids, prompt and messages");
    if ((j.contains("documents") || j.contains("tools")) &&
        !j.contains("messages"))
      return error("documents and tools go with messages");
    if (j.contains("prompt_ids"))
      return promptIdsOf(r);
    if (j.contains("prompt") && !j["prompt"].is_string())
      return error("prompt must be a string (token ids go in prompt_ids)");
    if (!text)
      return error(
          std::string("prompt and messages need the model's tokenizer, and "
                      "the artifact carries none ") +
          kNoTokenizerReason + ": give prompt_ids");
    StatusOr<std::vector<int32_t>> ids = Status::error("");
    if (j.contains("prompt"))
      ids = text->encode(j["prompt"].get<std::string>(),
                         /*addSpecialTokens=*/true);
    else
      ids = text->encodeChat(j, /*addGenerationPrompt=*/true);
    if (!ids.ok())
      return error(ids.status().message());
    r.promptIds = *ids;
    return Status::success();
  }

  Status promptIdsOf(OwnedRequest &r) const {
    if (!j["prompt_ids"].is_array())
      return error("prompt_ids must be an array of ids");
    const json &promptIds = j["prompt_ids"];
    for (size_t i = 0; i < promptIds.size(); ++i) {
      std::optional<int64_t> id = integerIn(promptIds[i], INT32_MIN, INT32_MAX);
      if (!id)
        return error("prompt_ids[" + std::to_string(i) + "] is " +
                     jsonExcerpt(promptIds[i]) +
                     ", not a token id (an int32 integer)");
      r.promptIds.push_back((int32_t)*id);
    }
    return Status::success();
  }

  Status maxNewTokensOf(OwnedRequest &r) const {
    if (!j.contains("max_new_tokens"))
      return Status::success();
    std::optional<int64_t> n = integerIn(j["max_new_tokens"], 1, kInt64Max);
    if (!n)
      return error("max_new_tokens must be an integer of at least 1, found " +
                   jsonExcerpt(j["max_new_tokens"]));
    r.options.max_new_tokens = *n;
    return Status::success();
  }

  Status logitsFromOf(OwnedRequest &r) const {
    if (!j.contains("logits_from"))
      return Status::success();
    // F = P + N - 1 asks for no row.
    int64_t end = logitsRowsEnd(r);
    std::optional<int64_t> from = integerIn(j["logits_from"], 0, end);
    if (!from)
      return error("logits_from must be an integer in [0, prompt tokens + "
                   "max_new_tokens - "
                   "1] = [0, " +
                   std::to_string(end) + "], found " +
                   jsonExcerpt(j["logits_from"]));
    r.options.record_logits_from = *from;
    return Status::success();
  }

  /// Sampling, with the command line's ranges.
  Status samplingOf(OwnedRequest &r) const {
    for (auto [key, range, field] :
         {std::tuple{"temperature", kTemperatureRange, &r.options.temperature},
          std::tuple{"top_p", kTopPRange, &r.options.top_p}}) {
      if (!j.contains(key))
        continue;
      if (!j[key].is_number() || !range.holds(j[key].get<double>()))
        return error(std::string(key) + " must be " + range.what + ", found " +
                     jsonExcerpt(j[key]));
      *field = j[key].get<double>();
    }
    if (j.contains("top_k")) {
      std::optional<int64_t> k = integerIn(j["top_k"], 0, kInt64Max);
      if (!k)
        return error("top_k must be an integer >= 0, found " +
                     jsonExcerpt(j["top_k"]));
      r.options.top_k = *k;
    }
    if (j.contains("seed")) {
      const json &seed = j["seed"];
      if (!seed.is_number_unsigned() &&
          !(seed.is_number_integer() && seed.get<int64_t>() >= 0))
        return error("seed must be an integer >= 0 (uint64), found " +
                     jsonExcerpt(seed));
      r.options.seed = seed.get<uint64_t>();
    }
    return Status::success();
  }

  const json &j;
  const std::string &where;
  const ModelText *text;
};

} // namespace

std::optional<int64_t> integerIn(const json &value, int64_t low, int64_t high) {
  if (value.is_number_unsigned())
    return value.get<uint64_t>() <= (uint64_t)high
               ? std::optional<int64_t>(value.get<uint64_t>())
               : std::nullopt;
  if (!value.is_number_integer() || value.get<int64_t>() < low ||
      value.get<int64_t>() > high)
    return std::nullopt;
  return value.get<int64_t>();
}

Status forEachJsonLine(
    const std::string &path,
    const std::function<Status(const json &, const std::string &, int)>
        &onLine) {
  std::ifstream in(path);
  if (!in)
    return Status::error(path + ": cannot open (" + std::strerror(errno) + ")");
  // A device such as /dev/zero would be read forever, never ending a line.
  struct stat info;
  if (stat(path.c_str(), &info) == 0 &&
      (S_ISCHR(info.st_mode) || S_ISBLK(info.st_mode)))
    return Status::error(path + ": a device, not a file of JSON lines");
  std::string line;
  for (int lineNo = 1; std::getline(in, line); ++lineNo) {
    if (line.find_first_not_of(" \t\r") == std::string::npos)
      continue;
    std::string where = path + ":" + std::to_string(lineNo);
    StatusOr<json> j = parseJson<json>(line, where);
    if (!j.ok())
      return j.status();
    if (!j->is_object())
      return Status::error(where + ": not a JSON object");
    // The parser keeps the last of a key given twice: which value was meant
    // ("max_new_tokens": 1, ..., "max_new_tokens": 5) is a guess.
    if (std::optional<DuplicateKey> twice = findDuplicateKey(line))
      return Status::error(where + ": " + excerpt(twice->pointer) +
                           " is given twice");
    if (Status s = onLine(*j, where, lineNo); !s.ok())
      return s;
  }
  if (in.bad())
    return Status::error(path + ": cannot read (" + std::strerror(errno) + ")");
  return Status::success();
}

int64_t logitsRowsEnd(const OwnedRequest &r) {
  int64_t prompt = r.promptIds.size();
  int64_t n = r.options.max_new_tokens;
  // n - 1 first: prompt + n overflows where n is near kInt64Max.
  return n - 1 > kInt64Max - prompt ? kInt64Max : prompt + (n - 1);
}

StatusOr<std::vector<OwnedRequest>> readRequests(const std::string &path,
                                                 const OwnedRequest &defaults,
                                                 const ModelText *text) {
  std::vector<OwnedRequest> requests;
  std::map<std::string, int> lineOfId;
  Status read = forEachJsonLine(
      path, [&](const json &j, const std::string &where, int lineNo) {
        OwnedRequest r = defaults;
        // An integer id is written as its digits; null, a fraction or an
        // object would be quoted as JSON text, an id nobody chose.
        if (j.contains("id") && !j["id"].is_string() &&
            !j["id"].is_number_integer())
          return Status::error(where +
                               ": id must be a string or an integer, found " +
                               jsonExcerpt(j["id"]));
        r.id = !j.contains("id")     ? "line-" + std::to_string(lineNo)
               : j["id"].is_string() ? j["id"].get<std::string>()
                                     : j["id"].dump();
        auto [previous, isNew] = lineOfId.emplace(r.id, lineNo);
        if (!isNew)
          return Status::error(where + ": request id '" + excerpt(r.id) +
                               "' is already used on line " +
                               std::to_string(previous->second));
        Status s = LineReader(j, where, text).read(r);
        if (s.ok())
          requests.push_back(std::move(r));
        return s;
      });
  if (!read.ok())
    return read;
  if (requests.empty())
    return Status::error(path + ": no requests");
  return requests;
}

} // namespace cohere2c
