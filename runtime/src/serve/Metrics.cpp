//===- Metrics.cpp --------------------------------------------------------===//

#include "serve/Metrics.h"

#include <cstdio>

namespace cohere2c::serve {

namespace {

std::string number(double v) {
  char text[64];
  std::snprintf(text, sizeof text, "%.9g", v);
  return text;
}

void line(std::string &out, const std::string &name, const std::string &labels,
          double value) {
  out += name + (labels.empty() ? "" : "{" + labels + "}") + " " +
         number(value) + "\n";
}

void header(std::string &out, const std::string &name, const char *type,
            const std::string &help) {
  out += "# HELP " + name + " " + help + "\n# TYPE " + name + " " + type + "\n";
}

} // namespace

Histogram::Histogram(std::vector<double> bounds)
    : bounds_(std::move(bounds)), counts_(bounds_.size() + 1, 0) {}

void Histogram::observe(double value) {
  size_t bucket = 0;
  while (bucket < bounds_.size() && value > bounds_[bucket])
    ++bucket;
  ++counts_[bucket];
  sum_ += value;
  ++count_;
}

void Histogram::write(std::string &out, const std::string &name,
                      const std::string &help) const {
  header(out, name, "histogram", help);
  uint64_t cumulative = 0;
  for (size_t i = 0; i < bounds_.size(); ++i) {
    cumulative += counts_[i];
    line(out, name + "_bucket", "le=\"" + number(bounds_[i]) + "\"",
         cumulative);
  }
  line(out, name + "_bucket", "le=\"+Inf\"", count_);
  line(out, name + "_sum", "", sum_);
  line(out, name + "_count", "", count_);
}

// vLLM's bucket bounds for these three histograms.
Metrics::Metrics()
    : ttft_({0.001, 0.005, 0.01, 0.02, 0.04, 0.06, 0.08, 0.1, 0.25, 0.5, 0.75,
             1.0, 2.5, 5.0, 7.5, 10.0, 20.0, 40.0, 80.0}),
      tpot_({0.01, 0.025, 0.05, 0.075, 0.1, 0.15, 0.2, 0.3, 0.4, 0.5, 0.75, 1.0,
             2.5, 5.0, 7.5, 10.0, 20.0, 40.0, 80.0}),
      latency_({0.3, 0.5, 0.8, 1.0, 1.5, 2.0, 2.5, 5.0, 10.0, 15.0, 20.0, 30.0,
                40.0, 50.0, 60.0, 120.0, 240.0, 480.0}) {}

void Metrics::setEngineState(int64_t running, int64_t waiting,
                             int64_t freeBlocks,
                             std::vector<KVGroupBlocks> blocks) {
  std::lock_guard<std::mutex> lock(mutex_);
  running_ = running;
  waiting_ = waiting;
  freeBlocks_ = freeBlocks;
  blocks_ = std::move(blocks);
}

void Metrics::firstToken(double ttftSeconds) {
  std::lock_guard<std::mutex> lock(mutex_);
  ttft_.observe(ttftSeconds);
}

void Metrics::finished(const std::string &reason, int64_t promptTokens,
                       int64_t cachedTokens, int64_t generatedTokens,
                       double ttftSeconds, double latencySeconds) {
  std::lock_guard<std::mutex> lock(mutex_);
  ++finished_[reason];
  promptTokens_ += promptTokens;
  generationTokens_ += generatedTokens;
  prefixQueries_ += promptTokens;
  prefixHits_ += cachedTokens;
  if (generatedTokens > 1)
    tpot_.observe((latencySeconds - ttftSeconds) / (generatedTokens - 1));
  latency_.observe(latencySeconds);
}

void Metrics::rejected(int status) {
  std::lock_guard<std::mutex> lock(mutex_);
  ++rejected_[status];
}

std::string Metrics::prometheusText() const {
  std::lock_guard<std::mutex> lock(mutex_);
  std::string out;
  header(out, "cohere2c_num_requests_running", "gauge",
         "Requests in the running batch.");
  line(out, "cohere2c_num_requests_running", "", running_);
  header(out, "cohere2c_num_requests_waiting", "gauge",
         "Requests waiting to be admitted.");
  line(out, "cohere2c_num_requests_waiting", "", waiting_);
  header(out, "cohere2c_kv_cache_blocks", "gauge",
         "KV-cache blocks each group holds: used by sequences, cached "
         "(evictable).");
  for (const KVGroupBlocks &g : blocks_)
    for (auto [state, count] :
         {std::pair{"used", g.used}, std::pair{"cached", g.cached}})
      line(out, "cohere2c_kv_cache_blocks",
           "group=\"" + g.group + "\",state=\"" + state + "\"", count);
  header(out, "cohere2c_kv_cache_free_blocks", "gauge",
         "KV-cache blocks no group holds.");
  line(out, "cohere2c_kv_cache_free_blocks", "", freeBlocks_);
  header(out, "cohere2c_prefix_cache_queries_total", "counter",
         "Prompt tokens looked up in the prefix cache.");
  line(out, "cohere2c_prefix_cache_queries_total", "", prefixQueries_);
  header(out, "cohere2c_prefix_cache_hits_total", "counter",
         "Prompt tokens found in the prefix cache.");
  line(out, "cohere2c_prefix_cache_hits_total", "", prefixHits_);
  header(out, "cohere2c_prompt_tokens_total", "counter",
         "Prompt tokens of finished requests.");
  line(out, "cohere2c_prompt_tokens_total", "", promptTokens_);
  header(out, "cohere2c_generation_tokens_total", "counter",
         "Generated tokens of finished requests.");
  line(out, "cohere2c_generation_tokens_total", "", generationTokens_);
  header(out, "cohere2c_request_success_total", "counter",
         "Requests that ended, by finish reason (stop, length, cancelled, "
         "error).");
  for (const char *reason : {"stop", "length", "cancelled", "error"}) {
    auto found = finished_.find(reason);
    line(out, "cohere2c_request_success_total",
         std::string("finished_reason=\"") + reason + "\"",
         found == finished_.end() ? 0 : found->second);
  }
  header(out, "cohere2c_request_rejected_total", "counter",
         "Requests refused before they reached the engine, by HTTP status.");
  for (const auto &[status, count] : rejected_)
    line(out, "cohere2c_request_rejected_total",
         "status=\"" + std::to_string(status) + "\"", count);
  ttft_.write(out, "cohere2c_time_to_first_token_seconds",
              "Time to first token.");
  tpot_.write(out, "cohere2c_time_per_output_token_seconds",
              "Time per output token after the first.");
  latency_.write(out, "cohere2c_e2e_request_latency_seconds",
                 "Request latency.");
  return out;
}

} // namespace cohere2c::serve
