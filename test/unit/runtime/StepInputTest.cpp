//===- StepInputTest.cpp - What an executor accepts as a step -------------===//

#include "Executor.h"

#include <gtest/gtest.h>

namespace cohere2c {
namespace {

/// Two sequences, three tokens (the second sequence's token generated).
StepInput twoSequences() {
  StepInput in;
  in.ids = {5, 6, 7};
  in.positions = {0, 1, 9};
  in.seqRows = {0, 0, 1};
  in.generated = {0, 0, 1};
  in.numSeqs = 2;
  in.tableWidth = {1, 1};
  in.tables = {std::vector<int32_t>{0, 1}, std::vector<int32_t>{2, 3}};
  in.logitRows = {1, 2};
  return in;
}

TEST(StepInputTest, AcceptsAConsistentStep) {
  StepInput in = twoSequences();
  EXPECT_TRUE(in.check().ok()) << in.check().message();
  EXPECT_EQ(in.generatedRows(), (std::vector<int32_t>{2}));
}

TEST(StepInputTest, RefusesInconsistentSteps) {
  auto message = [](const StepInput &in) {
    Status s = in.check();
    return s.ok() ? std::string("ok") : s.message();
  };
  StepInput missing = twoSequences();
  missing.generated.pop_back();
  EXPECT_EQ(message(missing),
            "step input: 3 ids but 3 positions, 3 sequence rows and 2 generated flags");
  StepInput flag = twoSequences();
  flag.generated[1] = 2;
  EXPECT_EQ(message(flag), "step input: generated flag of token 1 is 2 (0 or 1)");
  StepInput seq = twoSequences();
  seq.seqRows[2] = 2;
  EXPECT_EQ(message(seq), "step input: token 2 has sequence row 2 of 2");
  StepInput row = twoSequences();
  row.logitRows[1] = 3;
  EXPECT_EQ(message(row), "step input: logits row 3 of 3 tokens");
  StepInput table = twoSequences();
  table.tables[1].pop_back();
  EXPECT_EQ(message(table),
            "step input: block table 1 has 1 entries for 2 sequences of width 1");
}

} // namespace
} // namespace cohere2c
