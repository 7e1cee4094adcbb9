//===- cohere2c/runtime.hpp - C++ helpers over the C API ------------------===//
//
// What every C++ client of cohere2c/runtime.h (cohere2c-run, the server of
// cohere2c/serve.h) would otherwise write again: a status's message taken
// as a value, handles that release themselves, the weights of the tools'
// --checkpoint DIR and --random-weights SEED, and request options that own
// the id and prompt they point to. Header-only C++17 over the C calls; it
// adds no behaviour of its own.
//
//===----------------------------------------------------------------------===//
#ifndef COHERE2C_RUNTIME_HPP
#define COHERE2C_RUNTIME_HPP

#include "cohere2c/runtime.h"

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace cohere2c {

/// Takes `status` (freeing it): std::nullopt for OK, else its message.
inline std::optional<std::string> takeError(cohere2c_status_t status) {
  if (cohere2c_status_is_ok(status))
    return std::nullopt;
  std::string message = cohere2c_status_message(status);
  cohere2c_status_free(status);
  return message;
}

/// A std::unique_ptr deleter that drops the handle's reference with the C
/// API's `Release` (which allows NULL).
template <auto Release> struct Releaser {
  template <typename T> void operator()(T *handle) const { Release(handle); }
};
using ArtifactHandle =
    std::unique_ptr<cohere2c_artifact_t, Releaser<cohere2c_artifact_release>>;
using EngineHandle =
    std::unique_ptr<cohere2c_engine_t, Releaser<cohere2c_engine_release>>;
using RequestHandle =
    std::unique_ptr<cohere2c_request_t, Releaser<cohere2c_request_release>>;
using TextHandle =
    std::unique_ptr<cohere2c_text_t, Releaser<cohere2c_text_release>>;
using DecoderHandle =
    std::unique_ptr<cohere2c_decoder_t, Releaser<cohere2c_decoder_release>>;

/// Binds to `artifact` the weights of the checkpoint folder `checkpoint` if
/// it is not empty, else seeded random weights if `randomSeed` is set, else
/// the weights file beside the library (what the tools' --checkpoint DIR
/// and --random-weights SEED choose). Errors: those of
/// cohere2c_artifact_load_weights, for the caller to free.
inline cohere2c_status_t bindWeights(cohere2c_artifact_t *artifact,
                                     const std::string &checkpoint,
                                     std::optional<uint64_t> randomSeed) {
  cohere2c_weights_options_t weights;
  cohere2c_weights_options_initialize(&weights);
  if (!checkpoint.empty()) {
    weights.source = COHERE2C_WEIGHTS_FROM_CHECKPOINT;
    weights.checkpoint_path = checkpoint.c_str();
  } else if (randomSeed) {
    weights.source = COHERE2C_WEIGHTS_RANDOM;
    weights.random_seed = *randomSeed;
  }
  return cohere2c_artifact_load_weights(artifact, &weights);
}

/// A request as a client builds it before submitting: the C API's options
/// and the id and prompt they point to, owned here.
struct OwnedRequest {
  /// Names the request in errors.
  std::string id;
  /// [P] token ids in [0, vocab_size).
  std::vector<int32_t> promptIds;
  /// Every option but id, prompt_ids and prompt_length, which submittable()
  /// fills in.
  cohere2c_request_options_t options;

  OwnedRequest() { cohere2c_request_options_initialize(&options); }
  /// `options` pointing at `id` and `promptIds`, for cohere2c_engine_submit
  /// and cohere2c_engine_validate: valid while this request lives unchanged.
  cohere2c_request_options_t submittable() const {
    cohere2c_request_options_t submitted = options;
    submitted.id = id.c_str();
    submitted.prompt_ids = promptIds.data();
    submitted.prompt_length = promptIds.size();
    return submitted;
  }
};

} // namespace cohere2c

#endif // COHERE2C_RUNTIME_HPP
