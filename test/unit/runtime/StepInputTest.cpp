//===- StepInputTest.cpp - What an executor accepts as a step -------------===//

#include "Executor.h"

#include <gtest/gtest.h>

namespace cohere2c {
namespace {

/// A vocabulary of 100, blocks of 4 tokens, a full group and a sliding one
/// with a window of 4, 8 blocks per pool.
StepLimits limits() {
  StepLimits l;
  l.vocab = 100;
  l.blockSize = 4;
  l.window = {0, 4};
  l.numBlocks = 8;
  return l;
}

/// Two sequences, three tokens (the second sequence's token, at position
/// 9, generated): sequence 1 sees blocks 0-2 of the full group and 1-2 of
/// the sliding one (keys 6-9); its sliding block 0 is freed.
StepInput twoSequences() {
  StepInput in;
  in.ids = {5, 6, 7};
  in.positions = {0, 1, 9};
  in.seqRows = {0, 0, 1};
  in.generated = {0, 0, 1};
  in.numSeqs = 2;
  in.tableWidth = 3;
  in.tables = {std::vector<int32_t>{0, -1, -1, 1, 2, 3},
               std::vector<int32_t>{0, -1, -1, -1, 4, 5}};
  in.logitRows = {1, 2};
  return in;
}

TEST(StepInputTest, AcceptsAConsistentStep) {
  StepInput in = twoSequences();
  EXPECT_TRUE(in.check(limits()).ok()) << in.check(limits()).message();
  EXPECT_EQ(in.generatedRows(), (std::vector<int32_t>{2}));
  // Prompt tokens: the generated token at position 9 does not count; it
  // alone counts for generated tokens.
  EXPECT_EQ(in.maxKeys(false), 2);
  EXPECT_EQ(in.maxKeys(true), 10);
}

TEST(StepInputTest, RefusesInconsistentSteps) {
  auto message = [](const StepInput &in) {
    Status s = in.check(limits());
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
            "step input: block table 1 has 5 entries for 2 sequences of width 3");
  StepInput id = twoSequences();
  id.ids[0] = 100;
  EXPECT_EQ(message(id), "step input: token 0 has id 100 outside the vocabulary of 100");
  StepInput position = twoSequences();
  position.positions[1] = -1;
  EXPECT_EQ(message(position), "step input: token 1 has position -1");
  StepInput past = twoSequences();
  past.positions[2] = 12; // block 3 of a 3-wide table
  EXPECT_EQ(message(past), "step input: sequence row 1 sees block 3 of group "
                           "0, past the table width 3");
  StepInput freed = twoSequences();
  freed.positions[2] = 8; // the sliding window (keys 5-8) reaches the freed block 1
  freed.tables[1][4] = -1;
  EXPECT_EQ(message(freed), "step input: sequence row 1 sees block 1 of group 1, whose id -1 "
                            "is outside [0, 8)");
  StepInput outside = twoSequences();
  outside.tables[0][5] = 8;
  EXPECT_EQ(message(outside), "step input: sequence row 1 sees block 2 of group 0, whose id 8 "
                              "is outside [0, 8)");
  StepInput oneTable = twoSequences();
  oneTable.tables.pop_back();
  EXPECT_EQ(message(oneTable), "step input: 1 block tables for 2 KV groups");
}

} // namespace
} // namespace cohere2c
