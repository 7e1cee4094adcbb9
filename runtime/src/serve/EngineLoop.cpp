//===- EngineLoop.cpp -----------------------------------------------------===//

#include "serve/EngineLoop.h"

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

EngineLoop::EngineLoop(Engine &engine, Metrics &metrics, int64_t maxWaiting)
    : engine_(engine), metrics_(metrics), maxWaiting_(maxWaiting) {
  publishState();
  thread_ = std::thread([this] { loop(); });
}

EngineLoop::~EngineLoop() { shutdown(std::chrono::milliseconds(0)); }

StatusOr<std::shared_ptr<RequestStream>>
EngineLoop::submit(const Request &request) {
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

void EngineLoop::loop() {
  for (;;) {
    std::deque<std::pair<Request, std::shared_ptr<RequestStream>>> incoming;
    std::vector<std::shared_ptr<RequestStream>> cancelled;
    bool stopping, stopNow;
    {
      std::unique_lock<std::mutex> lock(mutex_);
      work_.wait(lock, [&] {
        return !incoming_.empty() || !cancelled_.empty() || stopping_ ||
               engine_.hasWork();
      });
      incoming.swap(incoming_);
      cancelled.swap(cancelled_);
      stopping = stopping_;
      stopNow = stopNow_;
    }
    take(incoming, cancelled);
    if (stopNow)
      failAll(kShuttingDown);
    else if (engine_.hasWork())
      step();
    publishState();
    if (stopping && !engine_.hasWork()) {
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
    std::deque<std::pair<Request, std::shared_ptr<RequestStream>>> &incoming,
    std::vector<std::shared_ptr<RequestStream>> &cancelled) {
  for (auto &[request, stream] : incoming) {
    StatusOr<Ticket> ticket = engine_.submit(request);
    if (!ticket.ok()) {
      StreamEvent failed;
      failed.kind = StreamEvent::Failed;
      failed.error = ticket.status().message();
      stream->ended_ = true;
      stream->push(std::move(failed));
      continue;
    }
    stream->ticket_ = *ticket;
    inFlight_[*ticket] = stream;
  }
  for (const auto &stream : cancelled) {
    if (stream->ended_)
      continue;
    stream->ended_ = true;
    inFlight_.erase(stream->ticket_);
    Status s = engine_.cancel(stream->ticket_);
    if (!s.ok())
      failAll(s.message());
  }
}

void EngineLoop::step() {
  RunCallbacks callbacks;
  callbacks.onToken = [&](const RequestResult &r, int32_t token) {
    StreamEvent event;
    event.token = token;
    if (!r.logprobs.empty())
      event.logprobs = r.logprobs.back();
    inFlight_.at(r.ticket)->push(std::move(event));
  };
  callbacks.onFinish = [&](const RequestResult &r) {
    std::shared_ptr<RequestStream> stream = std::move(inFlight_.at(r.ticket));
    inFlight_.erase(r.ticket);
    StreamEvent event;
    event.kind = StreamEvent::Finished;
    event.result = r;
    stream->ended_ = true;
    stream->push(std::move(event));
  };
  Status s = engine_.step(callbacks);
  if (!s.ok())
    failAll("the engine failed: " + s.message());
}

void EngineLoop::failAll(const std::string &error) {
  for (auto &[ticket, stream] : inFlight_) {
    (void)engine_.cancel(ticket);
    StreamEvent event;
    event.kind = StreamEvent::Failed;
    event.error = error;
    stream->ended_ = true;
    stream->push(std::move(event));
  }
  inFlight_.clear();
}

void EngineLoop::publishState() {
  const kv::KVCacheManager &cache = engine_.kvCache();
  std::vector<KVGroupBlocks> blocks;
  for (int64_t g = 0; g < cache.numGroups(); ++g) {
    const kv::BlockPool &pool = cache.pool(g);
    blocks.push_back({cache.groupSpec(g).name, pool.numUsedBlocks(),
                      pool.numFreeBlocks(), pool.numEvictableBlocks()});
  }
  {
    std::lock_guard<std::mutex> lock(mutex_);
    waitingInEngine_ = engine_.numWaiting();
  }
  metrics_.setEngineState(engine_.numRunning(), engine_.numWaiting(),
                          std::move(blocks));
}

} // namespace cohere2c::serve
