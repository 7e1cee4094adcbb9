//===- Executor.cpp -------------------------------------------------------===//

#include "Executor.h"

#include <string>

namespace cohere2c {

Status StepInput::check() const {
  size_t tokens = ids.size();
  auto bad = [](const std::string &what) {
    return Status::error("step input: " + what);
  };
  if (positions.size() != tokens || seqRows.size() != tokens || generated.size() != tokens)
    return bad(std::to_string(tokens) + " ids but " + std::to_string(positions.size()) +
               " positions, " + std::to_string(seqRows.size()) + " sequence rows and " +
               std::to_string(generated.size()) + " generated flags");
  for (size_t t = 0; t < tokens; ++t) {
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
  for (int g = 0; g < kNumKVGroups; ++g)
    if (tableWidth[g] < 0 || (int64_t)tables[g].size() != (tableWidth[g] ? numSeqs : 0) *
                                                             tableWidth[g])
      return bad("block table " + std::to_string(g) + " has " +
                 std::to_string(tables[g].size()) + " entries for " +
                 std::to_string(numSeqs) + " sequences of width " +
                 std::to_string(tableWidth[g]));
  return Status::success();
}

std::vector<int32_t> StepInput::generatedRows() const {
  std::vector<int32_t> rows;
  for (size_t t = 0; t < generated.size(); ++t)
    if (generated[t])
      rows.push_back(t);
  return rows;
}

} // namespace cohere2c
