//===- EngineLoop.cpp -----------------------------------------------------===//

#include "serve/EngineLoop.h"

#include <algorithm>
#include <optional>

namespace cohere2c::serve {

std::vector<StreamEvent>
RequestStream::wait(std::chrono::milliseconds timeout) {
  std::unique_lock<std::mutex> lock(mutex_);
  arrived_.wait_for(lock, timeout, [&] { return !events_.empty(); });
  std::vector<StreamEvent> out(std::make_move_iterator(events_.begin()),
                               std::make_move_iterator(events_.end()));
  events_.clear();
  return out;
}

void RequestStream::push(StreamEvent event) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    events_.push_back(std::move(event));
  }
  arrived_.notify_all();
}

EngineLoop::EngineLoop(cohere2c_engine_t *engine, Metrics &metrics,
                       int64_t maxWaiting)
    : engine_(engine), metrics_(metrics), maxWaiting_(maxWaiting) {
  publishState();
  thread_ = std::thread([this] { loop(); });
}

EngineLoop::~EngineLoop() { shutdown(std::chrono::milliseconds(0)); }

Status EngineLoop::validate(const OwnedRequest &request) const {
  cohere2c_request_options_t options = request.submittable();
  std::optional<std::string> error =
      takeError(cohere2c_engine_validate(engine_, &options));
  return error ? Status::error(*error) : Status::success();
}

StatusOr<std::shared_ptr<RequestStream>>
EngineLoop::submit(const OwnedRequest &request) {
  auto stream = std::make_shared<RequestStream>();
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (stopping_)
      return Status::error(kShuttingDown);
    if ((int64_t)incoming_.size() + waitingInEngine_ >= maxWaiting_)
      return Status::error(kQueueFull);
    incoming_.emplace_back(request, stream);
  }
  work_.notify_all();
  return stream;
}

void EngineLoop::cancel(const std::shared_ptr<RequestStream> &stream) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    cancelled_.push_back(stream);
  }
  work_.notify_all();
}

void EngineLoop::shutdown(std::chrono::milliseconds grace) {
  std::unique_lock<std::mutex> lock(mutex_);
  if (!thread_.joinable())
    return;
  stopping_ = true;
  work_.notify_all();
  if (!exitedSignal_.wait_for(lock, grace, [&] { return exited_; })) {
    stopNow_ = true;
    work_.notify_all();
  }
  lock.unlock();
  thread_.join();
}

bool EngineLoop::hasWork() const {
  bool work = false;
  return !takeError(cohere2c_engine_has_work(engine_, &work)) && work;
}

void EngineLoop::loop() {
  for (;;) {
    std::deque<std::pair<OwnedRequest, std::shared_ptr<RequestStream>>>
        incoming;
    std::vector<std::shared_ptr<RequestStream>> cancelled;
    bool stopping, stopNow;
    {
      std::unique_lock<std::mutex> lock(mutex_);
      work_.wait(lock, [&] {
        return !incoming_.empty() || !cancelled_.empty() || stopping_ ||
               hasWork();
      });
      incoming.swap(incoming_);
      cancelled.swap(cancelled_);
      stopping = stopping_;
      stopNow = stopNow_;
    }
    take(incoming, cancelled);
    if (stopNow)
      failAll(kShuttingDown);
    else if (hasWork())
      step();
    publishState();
    if (stopping && !hasWork()) {
      std::lock_guard<std::mutex> lock(mutex_);
      if (incoming_.empty()) {
        exited_ = true;
        exitedSignal_.notify_all();
        return;
      }
    }
  }
}

void EngineLoop::take(
    std::deque<std::pair<OwnedRequest, std::shared_ptr<RequestStream>>>
        &incoming,
    std::vector<std::shared_ptr<RequestStream>> &cancelled) {
  for (auto &[request, stream] : incoming) {
    cohere2c_request_options_t options = request.submittable();
    std::optional<std::string> error =
        takeError(cohere2c_engine_submit(engine_, &options, &stream->request_));
    if (error) {
      StreamEvent failed;
      failed.kind = StreamEvent::Failed;
      failed.error = *error;
      end(*stream, std::move(failed));
      continue;
    }
    stream->logprobs_ = options.top_logprobs >= 0;
    inFlight_.push_back(stream);
  }
  for (const auto &stream : cancelled) {
    if (stream->ended_)
      continue;
    stream->ended_ = true; // its reader stopped listening: nothing more to push
    if (std::optional<std::string> error =
            takeError(cohere2c_request_cancel(stream->request_)))
      failAll(*error);
  }
  dropEnded();
}

void EngineLoop::step() {
  if (std::optional<std::string> error =
          takeError(cohere2c_engine_step(engine_))) {
    failAll("the engine failed: " + *error);
    return;
  }
  for (const auto &stream : inFlight_)
    if (!stream->ended_)
      publish(*stream);
  dropEnded();
}

void EngineLoop::dropEnded() {
  auto ended = [](const std::shared_ptr<RequestStream> &s) {
    if (s->ended_)
      cohere2c_request_release(std::exchange(s->request_, nullptr));
    return s->ended_;
  };
  inFlight_.erase(std::remove_if(inFlight_.begin(), inFlight_.end(), ended),
                  inFlight_.end());
}

void EngineLoop::publish(RequestStream &stream) {
  const int32_t *ids = nullptr;
  size_t count = 0;
  std::optional<std::string> error =
      takeError(cohere2c_request_generated_ids(stream.request_, &ids, &count));
  for (; !error && stream.pushed_ < count; ++stream.pushed_) {
    StreamEvent event;
    event.token = ids[stream.pushed_];
    if (stream.logprobs_) {
      TokenLogprobs lp;
      int32_t topIds[COHERE2C_MAX_TOP_LOGPROBS];
      float topLogprobs[COHERE2C_MAX_TOP_LOGPROBS];
      size_t top = 0;
      error = takeError(cohere2c_request_logprobs(
          stream.request_, stream.pushed_, &lp.logprob, topIds, topLogprobs,
          COHERE2C_MAX_TOP_LOGPROBS, &top));
      if (error)
        break;
      for (size_t i = 0; i < top; ++i)
        lp.top.push_back({topIds[i], topLogprobs[i]});
      event.logprobs = std::move(lp);
    }
    stream.push(std::move(event));
  }
  cohere2c_request_state_t state = COHERE2C_REQUEST_IN_FLIGHT;
  cohere2c_request_stats_t stats = {};
  if (!error)
    error = takeError(cohere2c_request_state(stream.request_, &state));
  if (!error && state == COHERE2C_REQUEST_FINISHED)
    error = takeError(cohere2c_request_stats(stream.request_, &stats));
  StreamEvent last;
  last.kind = error ? StreamEvent::Failed : StreamEvent::Finished;
  last.error = error.value_or("");
  last.cachedTokens = stats.cached_tokens;
  if (error || state == COHERE2C_REQUEST_FINISHED)
    end(stream, std::move(last));
}

void EngineLoop::end(RequestStream &stream, StreamEvent event) {
  stream.ended_ = true;
  stream.push(std::move(event));
}

void EngineLoop::failAll(const std::string &error) {
  for (const auto &stream : inFlight_) {
    if (stream->ended_)
      continue;
    (void)takeError(cohere2c_request_cancel(stream->request_));
    StreamEvent event;
    event.kind = StreamEvent::Failed;
    event.error = error;
    end(*stream, std::move(event));
  }
  dropEnded();
}

void EngineLoop::publishState() {
  cohere2c_engine_load_t load = {};
  if (takeError(cohere2c_engine_load(engine_, &load)))
    return;
  std::vector<KVGroupBlocks> blocks;
  for (size_t g = 0; g < load.kv_groups; ++g) {
    cohere2c_kv_group_t group;
    if (!takeError(cohere2c_engine_kv_group(engine_, g, &group)))
      blocks.push_back({group.name, group.used_blocks, group.evictable_blocks});
  }
  {
    std::lock_guard<std::mutex> lock(mutex_);
    waitingInEngine_ = load.waiting;
  }
  metrics_.setEngineState(load.running, load.waiting, load.free_kv_blocks,
                          std::move(blocks));
}

} // namespace cohere2c::serve
