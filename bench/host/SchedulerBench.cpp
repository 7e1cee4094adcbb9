//===- SchedulerBench.cpp - The engine's host work per step ---------------===//
//
// The continuous-batching engine (scheduler, KV-cache manager, step inputs)
// serving the throughput benchmark's 128/128 case on Command R7B's shapes
// (test/data/configs/command-r7b.config.json): 1,024 requests of 128 prompt
// ids and 128 new tokens at --max-batch 256 and 1024, with 72,000 KV blocks
// of 16 tokens (room for all 1,024 at once, as on an H100), every step
// tokens-only (greedy on the device). The executor computes nothing and
// returns a token for each row, so the time is the host's alone: what the
// engine adds to a cuda step while the GPU waits for its inputs
// (CudaExecutor's own uploads and launches not included). Reports the steps
// of a run and the time per step.
//
//   cohere2c-bench-scheduler [--benchmark_filter=...]
//
//===----------------------------------------------------------------------===//
#include "scheduler/Engine.h"

#include <benchmark/benchmark.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <random>

using namespace cohere2c;

namespace {

class InstantExecutor : public Executor {
public:
  Status run(const StepInput &in, StepOutput &output) override {
    output.sampledTokens.assign(in.logitRows.size(), 7);
    return Status::success();
  }
  int64_t bytesPerBlock() const override { return 1; }
};

Manifest commandR7B() {
  StatusOr<ModelConfig> config = ModelConfig::fromFile(
      std::string(COHERE2C_TEST_DATA_DIR) + "/configs/command-r7b.config.json");
  if (!config.ok()) {
    std::fprintf(stderr, "%s\n", config.status().message().c_str());
    std::exit(1);
  }
  return Manifest::ofConfig(*config, "cuda", "fp8-rowwise");
}

void BM_Serve128x128(benchmark::State &state) {
  int64_t batch = state.range(0);
  Manifest m = commandR7B();
  std::mt19937 rng(1);
  std::uniform_int_distribution<int32_t> id(1000, 200000);
  std::vector<Request> requests(1024);
  for (size_t i = 0; i < requests.size(); ++i) {
    requests[i].id = std::to_string(i);
    for (int t = 0; t < 128; ++t)
      requests[i].promptIds.push_back(id(rng));
    requests[i].maxNewTokens = 128;
    requests[i].ignoreEos = true;
  }
  InstantExecutor executor;
  int64_t steps = 0;
  double ms = 0;
  for (auto _ : state) {
    EngineOptions options;
    options.maxBatch = batch;
    options.numBlocks = 72000;
    auto engine = Engine::create(executor, m, options);
    if (!engine.ok()) {
      state.SkipWithError(engine.status().message().c_str());
      return;
    }
    auto start = std::chrono::steady_clock::now();
    auto results = (*engine)->run(requests);
    ms += std::chrono::duration<double, std::milli>(
              std::chrono::steady_clock::now() - start)
              .count();
    if (!results.ok()) {
      state.SkipWithError(results.status().message().c_str());
      return;
    }
    steps += (*engine)->stats().steps;
  }
  state.counters["steps"] = (double)steps / state.iterations();
  state.counters["ms_per_step"] = ms / steps;
}
BENCHMARK(BM_Serve128x128)->Arg(256)->Arg(1024)->Unit(benchmark::kMillisecond);

} // namespace

BENCHMARK_MAIN();
