//===- Handles.h - What the C API's handles hold --------------------------===//
//
// The C++ objects behind cohere2c_artifact_t, cohere2c_text_t and
// cohere2c_engine_t, for the C API's own files and for the runtime's layers
// that are built on the C API but need more of the engine than it offers:
// the server (serve/) loads and creates through the C API, then drives the
// engine and the model's text behind the handles (per-token log
// probabilities, stop strings over incremental decoding). Nothing outside
// runtime/src sees this header.
//
//===----------------------------------------------------------------------===//
#ifndef COHERE2C_RUNTIME_CAPI_HANDLES_H
#define COHERE2C_RUNTIME_CAPI_HANDLES_H

#include "cohere2c/runtime.hpp"

#include "Artifact.h"
#include "Executor.h"
#include "Weights.h"
#include "scheduler/Engine.h"
#include "text/ModelText.h"

#include <atomic>
#include <map>
#include <memory>
#include <string>
#include <vector>

struct cohere2c_artifact_t {
  std::atomic<int64_t> references{1};
  std::unique_ptr<cohere2c::LoadedArtifact> loaded;
  /// Null when the library carries no tokenizer; shared with the text
  /// handles of cohere2c_artifact_text.
  std::shared_ptr<const cohere2c::text::ModelText> text;
  std::unique_ptr<cohere2c::WeightSource> weights;
};

struct cohere2c_text_t {
  std::atomic<int64_t> references{1};
  std::shared_ptr<const cohere2c::text::ModelText> model;
  /// The checkpoint folder or library the text came from, for errors.
  std::string source;
};

namespace cohere2c::capi {

/// A status of the C API for the caller to free.
cohere2c_status_t makeStatus(cohere2c_status_code_t code, std::string message);
/// NULL for an OK `status`, else its message with `code`.
cohere2c_status_t statusOf(const Status &status, cohere2c_status_code_t code);
/// INVALID_ARGUMENT: "`function`: `argument` is NULL".
cohere2c_status_t nullArgument(const char *function, const char *argument);

/// A malloc'd copy the caller frees with cohere2c_free (C code cannot call
/// delete[]); text NUL-terminated, `outLength` optional.
void copyOut(const std::string &text, char **outText, size_t *outLength);
void copyOut(const std::vector<int32_t> &ids, int32_t **outIds,
             size_t *outCount);

/// Drops one reference of `handle`, deleting it with the last.
template <typename Handle> void releaseReference(Handle *handle) {
  if (handle && handle->references.fetch_sub(1) == 1)
    delete handle;
}

} // namespace cohere2c::capi

// Members that keep their artifact or engine alive (the handles of
// cohere2c/runtime.hpp) release it last: declared first, destroyed last.
struct cohere2c_engine_t {
  cohere2c::ArtifactHandle artifact;
  std::atomic<int64_t> references{1};
  /// As created: numBlocks resolved, the EOS ids in force.
  cohere2c::EngineOptions options;
  std::unique_ptr<cohere2c::Executor> executor;
  std::unique_ptr<cohere2c::Engine> engine;
  /// The requests of the C API in flight, by ticket; a request leaves at
  /// its end.
  std::map<cohere2c::Ticket, cohere2c_request_t *> inFlight;
};

#endif // COHERE2C_RUNTIME_CAPI_HANDLES_H
