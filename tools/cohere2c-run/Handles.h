//===- Handles.h - cohere2c-run's view of the runtime's C API -------------===//
//
// The tool reaches the runtime through cohere2c/runtime.h alone (with the
// C++ helpers of cohere2c/runtime.hpp); this wraps it the tool's way:
// a run of requests (the model's text: ModelText.h, shared with
// cohere2c-tokenize).
//
//===----------------------------------------------------------------------===//
#ifndef COHERE2C_TOOLS_RUN_HANDLES_H
#define COHERE2C_TOOLS_RUN_HANDLES_H

#include "ModelText.h"
#include "Support/Status.h"
#include "cohere2c/runtime.hpp"

#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace cohere2c {

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
