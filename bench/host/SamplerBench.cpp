//===- SamplerBench.cpp - Sampling a token from a vocabulary's logits -----===//
//
// One row of 256,000 logits (Command R7B's vocabulary; normal with standard
// deviation 3, seeded) sampled at temperature 0.7 with neither top-k nor
// top-p, with top-p 0.9, with top-k 50, and with both, on one thread: the
// host work a sampled request costs per generated token.
//
//   cohere2c-bench-sampler [--benchmark_filter=TopP]
//
//===----------------------------------------------------------------------===//
#include "scheduler/Sampler.h"

#include <benchmark/benchmark.h>

#include <random>
#include <vector>

using namespace cohere2c;

namespace {

const std::vector<float> &logits() {
  static const std::vector<float> row = [] {
    std::mt19937 rng(1);
    std::normal_distribution<float> normal(0.0f, 3.0f);
    std::vector<float> values(256000);
    for (float &v : values)
      v = normal(rng);
    return values;
  }();
  return row;
}

void sample(benchmark::State &state, int64_t topK, double topP) {
  SamplingParams params;
  params.temperature = 0.7;
  params.topK = topK;
  params.topP = topP;
  params.seed = 3;
  Sampler sampler(params);
  const std::vector<float> &row = logits();
  int64_t k = 0;
  for (auto _ : state)
    benchmark::DoNotOptimize(sampler.sample(row.data(), row.size(), k++));
}

void Temperature(benchmark::State &state) { sample(state, 0, 1.0); }
void TopP(benchmark::State &state) { sample(state, 0, 0.9); }
void TopK(benchmark::State &state) { sample(state, 50, 1.0); }
void TopKTopP(benchmark::State &state) { sample(state, 50, 0.9); }

BENCHMARK(Temperature)->Unit(benchmark::kMillisecond);
BENCHMARK(TopP)->Unit(benchmark::kMillisecond);
BENCHMARK(TopK)->Unit(benchmark::kMillisecond);
BENCHMARK(TopKTopP)->Unit(benchmark::kMillisecond);

} // namespace

BENCHMARK_MAIN();
