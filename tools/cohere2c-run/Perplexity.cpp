//===- Perplexity.cpp -----------------------------------------------------===//

#include "Perplexity.h"
#include "RequestsFile.h"

#include <cmath>
#include <cstdio>
#include <map>

namespace cohere2c {

namespace {

using json = nlohmann::ordered_json;

/// -log softmax(logits)[token] in float64: the sum of exponentials over a
/// 256000-token vocabulary is where float32 loses the digits a perplexity
/// comparison needs.
double negativeLogLikelihood(const float *logits, int64_t vocab,
                             int32_t token) {
  double max = logits[0];
  for (int64_t v = 1; v < vocab; ++v)
    max = std::max(max, (double)logits[v]);
  double sum = 0;
  for (int64_t v = 0; v < vocab; ++v)
    sum += std::exp((double)logits[v] - max);
  return std::log(sum) + max - (double)logits[token];
}

/// One line's sequence; `where` is "FILE:LINE".
StatusOr<std::vector<int32_t>> sequenceOf(const json &j,
                                          const std::string &where,
                                          const text::ModelText *text) {
  for (auto &field : j.items())
    if (field.key() != "ids" && field.key() != "text")
      return Status::error(where + ": unknown field '" + field.key() +
                           "' (expected ids or text)");
  if (j.contains("ids") == j.contains("text"))
    return Status::error(where + ": give exactly one of ids and text");
  std::vector<int32_t> ids;
  if (j.contains("text")) {
    if (!j["text"].is_string())
      return Status::error(where + ": text must be a string");
    if (!text)
      return Status::error(where + ": text needs the model's tokenizer, and "
                                   "the artifact carries none: give ids");
    auto encoded = text->encodePrompt(j["text"].get<std::string>());
    if (!encoded.ok())
      return Status::error(where + ": " + encoded.status().message());
    ids = *encoded;
  } else {
    if (!j["ids"].is_array())
      return Status::error(where + ": ids must be an array of token ids");
    for (size_t i = 0; i < j["ids"].size(); ++i) {
      std::optional<int64_t> id = integerIn(j["ids"][i], INT32_MIN, INT32_MAX);
      if (!id)
        return Status::error(where + ": ids[" + std::to_string(i) + "] is " +
                             j["ids"][i].dump() + ", not a token id");
      ids.push_back((int32_t)*id);
    }
  }
  if (ids.size() < 2)
    return Status::error(where + ": " + std::to_string(ids.size()) +
                         " tokens; scoring needs at least 2");
  return ids;
}

} // namespace

StatusOr<std::vector<Request>> readPerplexityFile(const std::string &path,
                                                  const text::ModelText *text) {
  std::vector<Request> requests;
  Status read =
      forEachJsonLine(path, [&](const json &j, const std::string &where, int) {
        auto ids = sequenceOf(j, where, text);
        if (!ids.ok())
          return ids.status();
        Request r;
        r.id = where; // the engine's errors name the request
        r.promptIds = std::move(*ids);
        r.maxNewTokens = 1;
        r.ignoreEos = true;
        r.recordLogits = true;
        requests.push_back(std::move(r));
        return Status::success();
      });
  if (!read.ok())
    return read;
  if (requests.empty())
    return Status::error(path + ": no sequences");
  return requests;
}

double PerplexityReport::perplexity() const {
  double nats = 0;
  int64_t tokens = 0;
  for (size_t i = 0; i < nll.size(); ++i) {
    nats += nll[i];
    tokens += tokensScored[i];
  }
  return std::exp(nats / (double)tokens);
}

std::string PerplexityReport::json() const {
  int64_t tokens = 0;
  for (int64_t n : tokensScored)
    tokens += n;
  nlohmann::ordered_json out = {
      {"perplexity", perplexity()}, {"tokens_scored", tokens}, {"nll", nll}};
  return out.dump();
}

StatusOr<PerplexityReport> scorePerplexity(Engine &engine,
                                           const std::vector<Request> &requests,
                                           int64_t vocab) {
  std::map<Ticket, size_t> indexOf;
  for (size_t i = 0; i < requests.size(); ++i) {
    auto ticket = engine.submit(requests[i]);
    if (!ticket.ok())
      return ticket.status();
    indexOf[*ticket] = i;
  }
  PerplexityReport report;
  report.nll.assign(requests.size(), 0.0);
  report.tokensScored.assign(requests.size(), 0);
  Status scored = Status::success();
  RunCallbacks callbacks;
  callbacks.onFinish = [&](const RequestResult &r) {
    size_t i = indexOf.at(r.ticket);
    const std::vector<int32_t> &ids = requests[i].promptIds;
    if (r.firstLogitsRow != 0) {
      scored = Status::error(r.id + ": the prefix cache served its first " +
                             std::to_string(r.firstLogitsRow) + " tokens");
      return;
    }
    // Row p is the distribution of token p + 1.
    for (size_t p = 0; p + 1 < ids.size(); ++p)
      report.nll[i] +=
          negativeLogLikelihood(r.logits.data() + p * vocab, vocab, ids[p + 1]);
    report.tokensScored[i] = ids.size() - 1;
  };
  while (engine.hasWork() && scored.ok())
    if (Status s = engine.step(callbacks); !s.ok())
      return s;
  if (!scored.ok())
    return scored;
  return report;
}

} // namespace cohere2c
