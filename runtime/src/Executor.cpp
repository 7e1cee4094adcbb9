//===- Executor.cpp -------------------------------------------------------===//

#include "Executor.h"
#include "scheduler/Sampler.h"

#include <algorithm>
#include <climits>
#include <cmath>
#include <string>

namespace cohere2c {

void sampledTokensOnHost(const StepInput &input, int64_t vocab,
                         StepOutput &output) {
  if (!input.tokensOnly)
    return;
  output.sampledTokens.resize(input.logitRows.size());
  for (size_t r = 0; r < input.logitRows.size(); ++r)
    output.sampledTokens[r] =
        gumbelMaxToken(output.logits.data() + r * vocab, vocab,
                       input.temperatures[r], input.noiseSeeds[r]);
}

StepLimits StepLimits::of(const Manifest &manifest, int64_t blockSize,
                          int64_t numBlocks) {
  StepLimits limits;
  limits.vocab = manifest.config.vocabSize;
  limits.blockSize = blockSize;
  limits.numBlocks = numBlocks;
  for (const KVGroup &group : manifest.kvGroups)
    limits.window.push_back(group.window);
  return limits;
}

Status StepInput::check(const StepLimits &limits) const {
  size_t tokens = ids.size();
  auto bad = [](const std::string &what) {
    return Status::error("step input: " + what);
  };
  if (positions.size() != tokens || seqRows.size() != tokens || generated.size() != tokens)
    return bad(std::to_string(tokens) + " ids but " + std::to_string(positions.size()) +
               " positions, " + std::to_string(seqRows.size()) + " sequence rows and " +
               std::to_string(generated.size()) + " generated flags");
  for (size_t t = 0; t < tokens; ++t) {
    if (ids[t] < 0 || ids[t] >= limits.vocab)
      return bad("token " + std::to_string(t) + " has id " + std::to_string(ids[t]) +
                 " outside the vocabulary of " + std::to_string(limits.vocab));
    if (positions[t] < 0)
      return bad("token " + std::to_string(t) + " has position " +
                 std::to_string(positions[t]));
    if (generated[t] != 0 && generated[t] != 1)
      return bad("generated flag of token " + std::to_string(t) + " is " +
                 std::to_string(generated[t]) + " (0 or 1)");
    if (seqRows[t] < 0 || seqRows[t] >= numSeqs)
      return bad("token " + std::to_string(t) + " has sequence row " +
                 std::to_string(seqRows[t]) + " of " + std::to_string(numSeqs));
  }
  for (int32_t row : logitRows)
    if (row < 0 || (size_t)row >= tokens)
      return bad("logits row " + std::to_string(row) + " of " + std::to_string(tokens) +
                 " tokens");
  if (tokensOnly && (temperatures.size() != logitRows.size() ||
                     noiseSeeds.size() != logitRows.size()))
    return bad(std::to_string(logitRows.size()) + " logits rows but " +
               std::to_string(temperatures.size()) + " temperatures and " +
               std::to_string(noiseSeeds.size()) + " noise seeds");
  if (tokensOnly)
    for (float t : temperatures)
      if (!(t >= 0.0f) || !std::isfinite(t))
        return bad("temperature " + std::to_string(t) +
                   " (finite and at least 0)");
  if (tables.size() != limits.window.size())
    return bad(std::to_string(tables.size()) + " block tables for " +
               std::to_string(limits.window.size()) + " KV groups");
  for (size_t g = 0; g < tables.size(); ++g)
    if (tableWidth < 0 || (int64_t)tables[g].size() != numSeqs * tableWidth)
      return bad("block table " + std::to_string(g) + " has " +
                 std::to_string(tables[g].size()) + " entries for " +
                 std::to_string(numSeqs) + " sequences of width " +
                 std::to_string(tableWidth));
  // Per sequence and group: the blocks [first, last] its tokens can see.
  for (size_t g = 0; g < tables.size() && tokens > 0; ++g) {
    std::vector<int64_t> first(numSeqs, INT64_MAX), last(numSeqs, -1);
    for (size_t t = 0; t < tokens; ++t) {
      int64_t p = positions[t], from = limits.window[g] ? p - limits.window[g] + 1 : 0;
      first[seqRows[t]] = std::min(first[seqRows[t]], std::max<int64_t>(from, 0) / limits.blockSize);
      last[seqRows[t]] = std::max(last[seqRows[t]], p / limits.blockSize);
    }
    for (int64_t s = 0; s < numSeqs; ++s) {
      if (last[s] >= tableWidth)
        return bad("sequence row " + std::to_string(s) + " sees block " +
                   std::to_string(last[s]) + " of group " + std::to_string(g) +
                   ", past the table width " + std::to_string(tableWidth));
      for (int64_t k = first[s]; k <= last[s]; ++k) {
        int32_t block = tables[g][s * tableWidth + k];
        if (block < 0 || block >= limits.numBlocks)
          return bad("sequence row " + std::to_string(s) + " sees block " +
                     std::to_string(k) + " of group " + std::to_string(g) +
                     ", whose id " + std::to_string(block) +
                     " is outside [0, " + std::to_string(limits.numBlocks) +
                     ")");
      }
    }
  }
  return Status::success();
}

int64_t StepInput::maxKeys(bool generatedTokens) const {
  int64_t keys = 0;
  for (size_t t = 0; t < positions.size(); ++t)
    if ((generated[t] != 0) == generatedTokens)
      keys = std::max<int64_t>(keys, int64_t(positions[t]) + 1);
  return keys;
}

std::vector<int32_t> StepInput::generatedRows() const {
  std::vector<int32_t> rows;
  for (size_t t = 0; t < generated.size(); ++t)
    if (generated[t])
      rows.push_back(t);
  return rows;
}

} // namespace cohere2c
