//===- EngineLoop.h - The server's engine thread --------------------------===//
//
// One thread owns the Engine, and through it the executor and the KV cache
// (llama.cpp's server shape): it takes the requests HTTP threads submit,
// runs steps of continuous batching while there is work (admission by free
// blocks and preemption are the Engine's), and hands each request's tokens
// to its RequestStream, which the HTTP thread serving it reads. A stream
// cancelled by its reader (a client that disconnected, a stop string) is
// cancelled in the engine at the next step, freeing its blocks.
//
// Thread-safe: submit, cancel, validate and shutdown from any thread.
//
//===----------------------------------------------------------------------===//
#ifndef COHERE2C_SERVE_ENGINELOOP_H
#define COHERE2C_SERVE_ENGINELOOP_H

#include "Support/Status.h"
#include "cohere2c/runtime.hpp"
#include "serve/Metrics.h"

#include <chrono>
#include <condition_variable>
#include <deque>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

namespace cohere2c::serve {

/// A generated token's log probability and the most likely tokens at its
/// position, most likely first (cohere2c_request_logprobs).
struct TokenLogprobs {
  float logprob = 0;
  std::vector<std::pair<int32_t, float>> top;
};

/// What the engine thread tells a request's reader, in order: tokens, then
/// exactly one of finished or failed.
struct StreamEvent {
  enum Kind { Token, Finished, Failed } kind = Token;
  int32_t token = -1;
  std::optional<TokenLogprobs> logprobs; // with top_logprobs >= 0
  /// Finished: prompt tokens whose KV came from the prefix cache.
  int64_t cachedTokens = 0;
  /// Failed: why.
  std::string error;
};

/// The events of one request, from the engine thread to its reader.
class RequestStream {
public:
  /// The events that arrived, waiting at most `timeout` for the first.
  std::vector<StreamEvent> wait(std::chrono::milliseconds timeout);

private:
  friend class EngineLoop;
  void push(StreamEvent event);

  std::mutex mutex_;
  std::condition_variable arrived_;
  std::deque<StreamEvent> events_;
  // Engine thread only: the engine's request once submitted, whether it
  // asked for logprobs, the tokens already pushed, and whether it finished,
  // failed or was cancelled.
  cohere2c_request_t *request_ = nullptr;
  bool logprobs_ = false; // submitted with top_logprobs >= 0
  size_t pushed_ = 0;
  bool ended_ = false;
};

class EngineLoop {
public:
  /// `engine` (not owned) outlives the loop. `maxWaiting`: most requests
  /// queued or waiting for admission before submit refuses more. Starts
  /// the engine thread, which alone steps the engine.
  EngineLoop(cohere2c_engine_t *engine, Metrics &metrics, int64_t maxWaiting);
  /// Shuts down with no grace (cancels what is in flight).
  ~EngineLoop();

  /// cohere2c_engine_validate: whether the engine would take `request`;
  /// safe from any thread.
  Status validate(const OwnedRequest &request) const;
  /// Most requests queued at once (more than this can never be admitted
  /// together).
  int64_t maxWaiting() const { return maxWaiting_; }
  /// Queues `request`. Errors: kQueueFull when maxWaiting requests wait;
  /// kShuttingDown after shutdown began.
  StatusOr<std::shared_ptr<RequestStream>> submit(const OwnedRequest &request);
  /// Ends the request of `stream` (nothing more is pushed to it).
  void cancel(const std::shared_ptr<RequestStream> &stream);
  /// Refuses new requests, lets those in flight finish for at most
  /// `grace`, cancels the rest, and joins the engine thread.
  void shutdown(std::chrono::milliseconds grace);

  static constexpr const char *kQueueFull = "the server's queue is full";
  static constexpr const char *kShuttingDown = "the server is shutting down";

private:
  void loop();
  /// Submissions and cancellations from other threads, into the engine.
  void take(std::deque<std::pair<OwnedRequest, std::shared_ptr<RequestStream>>>
                &incoming,
            std::vector<std::shared_ptr<RequestStream>> &cancelled);
  void step();
  /// The tokens a request generated since the last push, then its end.
  void publish(RequestStream &stream);
  void end(RequestStream &stream, StreamEvent event);
  /// Releases the requests of ended streams and forgets them.
  void dropEnded();
  void failAll(const std::string &error);
  bool hasWork() const;
  void publishState();

  cohere2c_engine_t *engine_;
  Metrics &metrics_;
  const int64_t maxWaiting_;

  std::mutex mutex_;
  std::condition_variable work_;
  std::deque<std::pair<OwnedRequest, std::shared_ptr<RequestStream>>> incoming_;
  std::vector<std::shared_ptr<RequestStream>> cancelled_;
  int64_t waitingInEngine_ = 0; // as of the last step
  bool stopping_ = false, stopNow_ = false, exited_ = false;
  std::condition_variable exitedSignal_;

  /// Engine thread only: the submitted requests, in submission order.
  std::vector<std::shared_ptr<RequestStream>> inFlight_;
  std::thread thread_;
};

} // namespace cohere2c::serve

#endif // COHERE2C_SERVE_ENGINELOOP_H
