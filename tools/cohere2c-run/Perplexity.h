//===- Perplexity.h - cohere2c-run --perplexity: a model's NLL on text ----===//
//
// Teacher-forced scoring of token sequences, the check of a quantization on
// real text: each sequence ids[0..P) runs as a prompt (prefill steps only;
// the one token the engine samples after it is not scored), and
//   nll = sum over i in [1, P) of -log softmax(logits at i - 1)[ids[i]]
// in float64 from the f32 logits; perplexity = exp(sum nll / sum (P - 1))
// over all sequences (the definition of the shared trained model's
// perplexity.json).
//
// The file has one JSON object a line: {"ids": [...]} or, when the artifact
// carries a tokenizer, {"text": "..."} (encoded with the BOS, as --prompt).
//
//===----------------------------------------------------------------------===//
#ifndef COHERE2C_TOOLS_RUN_PERPLEXITY_H
#define COHERE2C_TOOLS_RUN_PERPLEXITY_H

#include "Handles.h"

#include <string>
#include <vector>

namespace cohere2c {

/// The sequences of the file at `path`, each as a request that records
/// every logits row and generates one token. Errors name the file and the
/// line: not a JSON object, an unknown field, neither or both of ids and
/// text, an id that is not an int32, fewer than 2 tokens, text without a
/// tokenizer (`text` null) or text the tokenizer rejects; an unreadable or
/// empty file.
StatusOr<std::vector<OwnedRequest>> readPerplexityFile(const std::string &path,
                                                       const ModelText *text);

struct PerplexityReport {
  /// Per sequence, in file order: the summed NLL (nats) and tokens scored.
  std::vector<double> nll;
  std::vector<int64_t> tokensScored;
  double perplexity() const;
  /// {"perplexity": ..., "tokens_scored": N, "nll": [...]} on one line.
  std::string json() const;
};

/// Scores `requests` (from readPerplexityFile) on `engine`, which must not
/// reuse cached prefixes (every row is needed). Each sequence's logits are
/// dropped once it is scored. Errors: the engine's.
StatusOr<PerplexityReport>
scorePerplexity(cohere2c_engine_t *engine,
                const std::vector<OwnedRequest> &requests, int64_t vocab);

} // namespace cohere2c

#endif // COHERE2C_TOOLS_RUN_PERPLEXITY_H
