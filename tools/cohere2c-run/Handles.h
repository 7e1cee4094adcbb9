//===- Handles.h - cohere2c-run's view of the runtime's C API -------------===//
//
// The tool reaches the runtime through cohere2c/runtime.h alone (with the
// C++ helpers of cohere2c/runtime.hpp); this wraps it the tool's way:
// statuses as Status values, the model's text, and a run of requests.
//
//===----------------------------------------------------------------------===//
#ifndef COHERE2C_TOOLS_RUN_HANDLES_H
#define COHERE2C_TOOLS_RUN_HANDLES_H

#include "Support/Status.h"
#include "cohere2c/runtime.hpp"

#include <nlohmann/json.hpp>

#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace cohere2c {

/// Takes `status` (freeing it): success for OK, else its message.
Status statusOf(cohere2c_status_t status);

/// The artifact's tokenizer and chat template; the tool passes a null
/// ModelText where the artifact carries none.
class ModelText {
public:
  explicit ModelText(cohere2c_artifact_t *artifact) : artifact_(artifact) {}
  cohere2c_artifact_t *artifact() const { return artifact_; }
  /// Ids of `text` with special tokens (the BOS as the tokenizer adds it).
  StatusOr<std::vector<int32_t>> encodePrompt(std::string_view text) const;
  /// Ids of a chat ({"messages", "documents", "tools"}; other fields are
  /// ignored) rendered with add_generation_prompt.
  StatusOr<std::vector<int32_t>>
  encodeChat(const nlohmann::ordered_json &chat) const;
  /// Text of `ids`, special tokens skipped.
  StatusOr<std::string> decode(const std::vector<int32_t> &ids) const;

private:
  cohere2c_artifact_t *artifact_;
};

/// What runRequests reports while requests progress; either may be empty.
struct RequestCallbacks {
  /// Each new token of requests[i], in order, once it is final.
  std::function<Status(size_t i, int32_t token)> onToken;
  /// requests[i] as it finishes, after its last onToken; its handle (and
  /// with it its logits) is released after.
  std::function<Status(size_t i, cohere2c_request_t *request)> onFinish;
};

/// Submits `requests` (none runs if one is refused) and steps `engine`
/// until all have finished, reporting to `callbacks` after each step: the
/// new tokens of every request, then the requests that finished, each in
/// submission order (the order the engine keeps running requests in).
/// Errors: submit's and step's, naming the request; the first of the
/// callbacks', which ends the run; SIGINT or SIGTERM (Interrupt.h), after
/// the step in progress and before its callbacks.
Status runRequests(cohere2c_engine_t *engine,
                   const std::vector<OwnedRequest> &requests,
                   const RequestCallbacks &callbacks);

} // namespace cohere2c

#endif // COHERE2C_TOOLS_RUN_HANDLES_H
