//===- Perplexity.cpp -----------------------------------------------------===//

#include "Perplexity.h"
#include "RequestsFile.h"
#include "Support/Json.h"

#include <cmath>
#include <cstdio>

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
StatusOr<std::vector<int32_t>>
sequenceOf(const json &j, const std::string &where, const ModelText *text) {
  for (auto &field : j.items())
    if (field.key() != "ids" && field.key() != "text")
      return Status::error(where + ": unknown field '" + excerpt(field.key()) +
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
    auto encoded =
        text->encode(j["text"].get<std::string>(), /*addSpecialTokens=*/true);
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
                             jsonExcerpt(j["ids"][i]) + ", not a token id");
      ids.push_back((int32_t)*id);
    }
  }
  if (ids.size() < 2)
    return Status::error(where + ": " + std::to_string(ids.size()) +
                         " tokens; scoring needs at least 2");
  return ids;
}

} // namespace

StatusOr<std::vector<OwnedRequest>> readPerplexityFile(const std::string &path,
                                                       const ModelText *text) {
  std::vector<OwnedRequest> requests;
  Status read =
      forEachJsonLine(path, [&](const json &j, const std::string &where, int) {
        auto ids = sequenceOf(j, where, text);
        if (!ids.ok())
          return ids.status();
        OwnedRequest r;
        r.id = where; // the engine's errors name the request
        r.promptIds = std::move(*ids);
        r.options.max_new_tokens = 1;
        r.options.ignore_eos = true;
        r.options.record_logits = true;
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

namespace {

/// Adds the NLL of a finished request `r` of `ids` to `nll` and the tokens
/// scored to `tokensScored`.
Status score(cohere2c_request_t *r, const OwnedRequest &request, int64_t vocab,
             double &nll, int64_t &tokensScored) {
  const float *logits = nullptr;
  int64_t rows = 0, firstRow = 0;
  if (Status s =
          statusOf(cohere2c_request_logits(r, &logits, &rows, &firstRow));
      !s.ok())
    return s;
  if (firstRow != 0)
    return Status::error(request.id + ": the prefix cache served its first " +
                         std::to_string(firstRow) + " tokens");
  // Row p is the distribution of token p + 1.
  const std::vector<int32_t> &ids = request.promptIds;
  for (size_t p = 0; p + 1 < ids.size(); ++p)
    nll += negativeLogLikelihood(logits + p * vocab, vocab, ids[p + 1]);
  tokensScored = ids.size() - 1;
  return Status::success();
}

} // namespace

StatusOr<PerplexityReport>
scorePerplexity(cohere2c_engine_t *engine,
                const std::vector<OwnedRequest> &requests, int64_t vocab) {
  PerplexityReport report;
  report.nll.assign(requests.size(), 0.0);
  report.tokensScored.assign(requests.size(), 0);
  RequestCallbacks callbacks;
  callbacks.onFinish = [&](size_t i, cohere2c_request_t *r) {
    return score(r, requests[i], vocab, report.nll[i], report.tokensScored[i]);
  };
  if (Status s = runRequests(engine, requests, callbacks); !s.ok())
    return s;
  return report;
}

} // namespace cohere2c
