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

#include "scheduler/Engine.h"
#include "serve/Metrics.h"

#include <chrono>
#include <condition_variable>
#include <deque>
#include <memory>
#include <mutex>
#include <optional>
#include <thread>
#include <unordered_map>

namespace cohere2c::serve {

/// What the engine thread tells a request's reader, in order: tokens, then
/// exactly one of finished or failed.
struct StreamEvent {
  enum Kind { Token, Finished, Failed } kind = Token;
  int32_t token = -1;
  std::optional<TokenLogprobs> logprobs; // with Request::topLogprobs >= 0
  /// Finished: the engine's result (ids, cached tokens, times); Failed: why.
  RequestResult result;
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
  Ticket ticket_ = 0;  // the engine's, once submitted (engine thread only)
  bool ended_ = false; // finished, failed or cancelled (engine thread only)
};

class EngineLoop {
public:
  /// `maxWaiting`: most requests queued or waiting for admission before
  /// submit refuses more. Starts the engine thread.
  EngineLoop(Engine &engine, Metrics &metrics, int64_t maxWaiting);
  /// Shuts down with no grace (cancels what is in flight).
  ~EngineLoop();

  /// Engine::validate; safe from any thread (it reads only the engine's
  /// immutable options and manifest).
  Status validate(const Request &request) const {
    return engine_.validate(request);
  }
  /// Most requests queued at once (more than this can never be admitted
  /// together).
  int64_t maxWaiting() const { return maxWaiting_; }
  /// Queues `request`. Errors: kQueueFull when maxWaiting requests wait;
  /// kShuttingDown after shutdown began.
  StatusOr<std::shared_ptr<RequestStream>> submit(const Request &request);
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
  void
  take(std::deque<std::pair<Request, std::shared_ptr<RequestStream>>> &incoming,
       std::vector<std::shared_ptr<RequestStream>> &cancelled);
  void step();
  void failAll(const std::string &error);
  void publishState();

  Engine &engine_;
  Metrics &metrics_;
  const int64_t maxWaiting_;

  std::mutex mutex_;
  std::condition_variable work_;
  std::deque<std::pair<Request, std::shared_ptr<RequestStream>>> incoming_;
  std::vector<std::shared_ptr<RequestStream>> cancelled_;
  int64_t waitingInEngine_ = 0; // as of the last step
  bool stopping_ = false, stopNow_ = false, exited_ = false;
  std::condition_variable exitedSignal_;

  /// Engine thread only.
  std::unordered_map<Ticket, std::shared_ptr<RequestStream>> inFlight_;
  std::thread thread_;
};

} // namespace cohere2c::serve

#endif // COHERE2C_SERVE_ENGINELOOP_H
