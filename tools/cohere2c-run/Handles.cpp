//===- Handles.cpp --------------------------------------------------------===//

#include "Handles.h"
#include "Interrupt.h"

#include <cstring>

namespace cohere2c {

namespace {

/// Queues `request` on `engine`. Errors: cohere2c_engine_submit's.
StatusOr<RequestHandle> submit(cohere2c_engine_t *engine,
                               const OwnedRequest &request) {
  cohere2c_request_options_t options = request.submittable();
  cohere2c_request_t *submitted = nullptr;
  if (Status s = statusOf(cohere2c_engine_submit(engine, &options, &submitted));
      !s.ok())
    return s;
  return RequestHandle(submitted);
}

/// Reports the tokens `request` generated past the `reported` first ones.
Status reportTokens(cohere2c_request_t *request, size_t i, size_t &reported,
                    const RequestCallbacks &callbacks) {
  const int32_t *ids = nullptr;
  size_t count = 0;
  if (Status s =
          statusOf(cohere2c_request_generated_ids(request, &ids, &count));
      !s.ok())
    return s;
  for (; reported < count; ++reported)
    if (callbacks.onToken)
      if (Status s = callbacks.onToken(i, ids[reported]); !s.ok())
        return s;
  return Status::success();
}

} // namespace

Status runRequests(cohere2c_engine_t *engine,
                   const std::vector<OwnedRequest> &requests,
                   const RequestCallbacks &callbacks) {
  std::vector<RequestHandle> inFlight;
  for (const OwnedRequest &request : requests) {
    auto submitted = submit(engine, request);
    if (!submitted.ok())
      return submitted.status();
    inFlight.push_back(std::move(*submitted));
  }
  std::vector<size_t> reported(requests.size(), 0);
  SteppingScope stepping;
  for (bool work = true; work;) {
    if (Status s = statusOf(cohere2c_engine_step(engine)); !s.ok())
      return s;
    if (int signal = interruptSignal())
      return Status::error(std::string("interrupted (") + strsignal(signal) +
                           ")");
    for (size_t i = 0; i < inFlight.size(); ++i)
      if (inFlight[i])
        if (Status s =
                reportTokens(inFlight[i].get(), i, reported[i], callbacks);
            !s.ok())
          return s;
    for (size_t i = 0; i < inFlight.size(); ++i) {
      if (!inFlight[i])
        continue;
      cohere2c_request_state_t state;
      if (Status s =
              statusOf(cohere2c_request_state(inFlight[i].get(), &state));
          !s.ok())
        return s;
      if (state != COHERE2C_REQUEST_FINISHED)
        continue;
      if (callbacks.onFinish)
        if (Status s = callbacks.onFinish(i, inFlight[i].get()); !s.ok())
          return s;
      inFlight[i].reset();
    }
    if (Status s = statusOf(cohere2c_engine_has_work(engine, &work)); !s.ok())
      return s;
  }
  return Status::success();
}

} // namespace cohere2c
