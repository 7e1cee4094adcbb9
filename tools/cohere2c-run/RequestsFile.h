//===- RequestsFile.h - cohere2c-run's --requests JSONL file --------------===//
//
// One request per line:
//   {"id": ..., "prompt_ids": [...] | "prompt": TEXT | "messages": [...],
//    "documents": [...], "tools": [...], "max_new_tokens": N,
//    "logits_from": F, "temperature": T, "top_k": K, "top_p": P, "seed": S}
// Exactly one of prompt_ids, prompt (text, the BOS added as the tokenizer
// adds it) and messages (a chat rendered with the model's chat template and
// add_generation_prompt; documents and tools go to the template) is
// required; the rest is optional. A request without an id is named
// "line-<its line number>", and the sampling fields default to the command
// line's (so requests that should sample differently need their own seeds).
//
//===----------------------------------------------------------------------===//
#ifndef COHERE2C_TOOLS_RUN_REQUESTSFILE_H
#define COHERE2C_TOOLS_RUN_REQUESTSFILE_H

#include "Handles.h"
#include "CommandLine.h"

#include <nlohmann/json.hpp>

#include <cmath>
#include <functional>
#include <limits>
#include <optional>
#include <string>
#include <vector>

namespace cohere2c {

constexpr int64_t kInt64Max = std::numeric_limits<int64_t>::max();

constexpr NumberRange kTemperatureRange{"a number >= 0",
                                        [](double t) { return t >= 0; }};
constexpr NumberRange kTopPRange{"a number in (0, 1]",
                                 [](double p) { return p > 0 && p <= 1; }};

/// `value` if it is an integer in [low, high].
std::optional<int64_t> integerIn(const nlohmann::ordered_json &value,
                                 int64_t low, int64_t high);

/// Calls `onLine(object, "FILE:LINE", line number)` for each non-blank line
/// of the file at `path`, stopping at its first error. Errors: the file
/// cannot be opened or read, is a device, or a line is not JSON, nests
/// deeper than kMaxJsonDepth (Support/Json.h) or is not an object (naming
/// FILE:LINE).
Status
forEachJsonLine(const std::string &path,
                const std::function<Status(const nlohmann::ordered_json &,
                                           const std::string &, int)> &onLine);

/// The end of a request's logits rows: rows exist for positions
/// [0, P + N - 1) (the last generated token is never fed back). N may be as
/// large as int64 allows: saturated.
int64_t logitsRowsEnd(const OwnedRequest &r);

/// The requests of the file at `path`, each starting from `defaults`.
/// `text` turns prompt and messages into ids; null when the artifact
/// carries no tokenizer (then such a line is an error). With --logits-dir
/// a request's file holds the logits rows of positions [F, P + N - 1)
/// (default F = 0; F = P + N - 1 records none); without it F is checked and
/// unused. Errors name the file and the line: not a JSON object, an unknown
/// field, a field of the wrong type or range, an id used twice, a prompt the
/// tokenizer or a chat the template rejects. A file that cannot be read or
/// holds no request is an error.
StatusOr<std::vector<OwnedRequest>> readRequests(const std::string &path,
                                                 const OwnedRequest &defaults,
                                                 const ModelText *text);

} // namespace cohere2c

#endif // COHERE2C_TOOLS_RUN_REQUESTSFILE_H
