//===- Metrics.h - The server's Prometheus metrics ------------------------===//
//
// Counters, gauges and histograms of cohere2c-serve, written in Prometheus'
// text exposition format (version 0.0.4) for GET /metrics. Names follow
// vLLM's where it has one (prefix cohere2c_ instead of vllm:).
//
// Thread-safe: HTTP threads and the engine thread update it at once.
//
//===----------------------------------------------------------------------===//
#ifndef COHERE2C_SERVE_METRICS_H
#define COHERE2C_SERVE_METRICS_H

#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <vector>

namespace cohere2c::serve {

/// Cumulative histogram over fixed bucket bounds (seconds).
class Histogram {
public:
  explicit Histogram(std::vector<double> bounds);
  void observe(double value);
  /// Prometheus lines for `name` (buckets, sum, count).
  void write(std::string &out, const std::string &name,
             const std::string &help) const;

private:
  std::vector<double> bounds_;
  std::vector<uint64_t> counts_; // per bucket, not cumulative; last = +Inf
  double sum_ = 0;
  uint64_t count_ = 0;
};

/// The blocks of the KV pool one KV group holds: used by sequences, and
/// cached-evictable (unreferenced but reusable by a later request with the
/// same prefix).
struct KVGroupBlocks {
  std::string group;
  int64_t used = 0, cached = 0;
};

class Metrics {
public:
  Metrics();

  /// The engine's state after a step: requests, the KV pool's free blocks
  /// and each group's.
  void setEngineState(int64_t running, int64_t waiting, int64_t freeBlocks,
                      std::vector<KVGroupBlocks> blocks);
  /// A request whose first token came `ttftSeconds` after it arrived.
  void firstToken(double ttftSeconds);
  /// A request that ended with `reason` ("stop", "length", "cancelled",
  /// "error"); the time per output token is observed when it generated more
  /// than one.
  void finished(const std::string &reason, int64_t promptTokens,
                int64_t cachedTokens, int64_t generatedTokens,
                double ttftSeconds, double latencySeconds);
  /// A request refused before it reached the engine, by HTTP status.
  void rejected(int status);

  std::string prometheusText() const;

private:
  mutable std::mutex mutex_;
  int64_t running_ = 0, waiting_ = 0;
  std::vector<KVGroupBlocks> blocks_;
  int64_t freeBlocks_ = 0;
  uint64_t promptTokens_ = 0, generationTokens_ = 0;
  uint64_t prefixQueries_ = 0, prefixHits_ = 0;
  std::map<std::string, uint64_t> finished_;
  std::map<int, uint64_t> rejected_;
  Histogram ttft_, tpot_, latency_;
};

} // namespace cohere2c::serve

#endif // COHERE2C_SERVE_METRICS_H
