//===- Handles.h - What the C API's artifact and engine handles hold ------===//
//
// The C++ objects behind cohere2c_artifact_t and cohere2c_engine_t, for the
// runtime's own layers that are built on the C API but need more of the
// engine than it offers: the server (serve/) loads and creates through the
// C API, then drives the engine and the model's text behind the handles
// (per-token log probabilities, stop strings over incremental decoding).
// Nothing outside runtime/src sees this header.
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

struct cohere2c_artifact_t {
  std::atomic<int64_t> references{1};
  std::unique_ptr<cohere2c::LoadedArtifact> loaded;
  /// Null when the library carries no tokenizer.
  std::unique_ptr<cohere2c::text::ModelText> text;
  std::unique_ptr<cohere2c::WeightSource> weights;
};

namespace cohere2c::capi {

/// A status of the C API for the caller to free.
cohere2c_status_t makeStatus(cohere2c_status_code_t code, std::string message);
/// NULL for an OK `status`, else its message with `code`.
cohere2c_status_t statusOf(const Status &status, cohere2c_status_code_t code);

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
