//===- TokenizerBench.cpp - Tokenizer encode and decode throughput --------===//
//
// Encodes about 1 MiB of English prose (the GNU GPL version 3, Debian's
// /usr/share/common-licenses/GPL-3, repeated) with the trained Cohere2
// tokenizer (test/data/models/trained-cohere2/tokenizer.json) on one
// thread, and decodes the ids back; throughput in bytes of text per second.
//
//   cohere2c-bench-tokenizer [--benchmark_filter=Encode]
//
//===----------------------------------------------------------------------===//
#include "text/tokenizer/Tokenizer.h"

#include <benchmark/benchmark.h>

#include <fstream>
#include <sstream>

using namespace cohere2c::text;

namespace {

std::string readFile(const std::string &path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

struct Corpus {
  std::string tokenizerJson;
  std::shared_ptr<const Tokenizer> tokenizer;
  std::string prose; // one copy of the text
  std::string text;  // copies of it, about 1 MiB
  std::string error;

  Corpus() {
    tokenizerJson = readFile(COHERE2C_TEST_DATA_DIR
                             "/models/trained-cohere2/tokenizer.json");
    auto parsed = Tokenizer::parse(tokenizerJson, "tokenizer.json");
    if (!parsed.ok()) {
      error = parsed.status().message();
      return;
    }
    tokenizer = *parsed;
    prose = readFile(COHERE2C_BENCH_ENGLISH_TEXT);
    if (prose.empty()) {
      error = "cannot read " COHERE2C_BENCH_ENGLISH_TEXT;
      return;
    }
    while (text.size() < (1u << 20))
      text += prose;
  }
};

const Corpus &corpus() {
  static const Corpus data;
  return data;
}

void BM_EncodeEnglish(benchmark::State &state) {
  const Corpus &data = corpus();
  if (!data.error.empty()) {
    state.SkipWithError(data.error.c_str());
    return;
  }
  size_t tokens = 0;
  for (auto _ : state) {
    auto ids = data.tokenizer->encode(data.text, /*addSpecialTokens=*/true);
    if (!ids.ok()) {
      state.SkipWithError(ids.status().message().c_str());
      return;
    }
    tokens = ids->size();
    benchmark::DoNotOptimize(ids->data());
  }
  state.SetBytesProcessed(int64_t(state.iterations()) *
                          int64_t(data.text.size()));
  state.counters["tokens"] = double(tokens);
}
BENCHMARK(BM_EncodeEnglish)->Unit(benchmark::kMillisecond);

// The first encode of a text by a new tokenizer: every word misses the word
// cache, so this is the BPE merge loop's own speed (a server's tokenizer is
// warm after its first requests; BM_EncodeEnglish is that case).
void BM_EncodeEnglishColdCache(benchmark::State &state) {
  const Corpus &data = corpus();
  if (!data.error.empty()) {
    state.SkipWithError(data.error.c_str());
    return;
  }
  for (auto _ : state) {
    state.PauseTiming();
    auto fresh = Tokenizer::parse(data.tokenizerJson, "tokenizer.json");
    state.ResumeTiming();
    auto ids = (*fresh)->encode(data.prose, /*addSpecialTokens=*/true);
    benchmark::DoNotOptimize(ids->data());
  }
  state.SetBytesProcessed(int64_t(state.iterations()) *
                          int64_t(data.prose.size()));
}
BENCHMARK(BM_EncodeEnglishColdCache)->Unit(benchmark::kMillisecond);

void BM_DecodeEnglish(benchmark::State &state) {
  const Corpus &data = corpus();
  if (!data.error.empty()) {
    state.SkipWithError(data.error.c_str());
    return;
  }
  std::vector<int32_t> ids = *data.tokenizer->encode(data.text, false);
  for (auto _ : state) {
    auto text = data.tokenizer->decode(ids, /*skipSpecialTokens=*/false);
    benchmark::DoNotOptimize(text->data());
  }
  state.SetBytesProcessed(int64_t(state.iterations()) *
                          int64_t(data.text.size()));
}
BENCHMARK(BM_DecodeEnglish)->Unit(benchmark::kMillisecond);

} // namespace

BENCHMARK_MAIN();
