//===- PlanInterpreter.h - A cuda artifact's launch plan, run on the CPU --===//
//
// A test oracle for the cuda lowering: runs the launch plan of a cuda
// artifact step by step on the CPU, each kernel by the semantics its name
// and the plan say (storage rounded to the buffers' dtypes, FP8 quantized as
// the kernels do, GEMMs accumulated in double), so that CI, which has no
// GPU, checks what the compiler recorded: the kernels chosen, their
// arguments, the buffers and their reuse. It does not check the PTX.
// Between a fork and its join (in steps with the side stream: step
// parameter side_stream) it runs one stream's steps, then the other's
// (the side stream first unless told otherwise): two orders the GPU may
// take, which give the same results only if neither stream touches what
// the other writes.
//
//===----------------------------------------------------------------------===//
#ifndef COHERE2C_TEST_PLANINTERPRETER_H
#define COHERE2C_TEST_PLANINTERPRETER_H

#include "Artifact.h"
#include "Executor.h"
#include "Weights.h"

#include <array>
#include <map>
#include <utility>
#include <string>
#include <vector>

namespace cohere2c::test {

class PlanInterpreter : public Executor {
public:
  PlanInterpreter(const Manifest &manifest, const WeightBuffer &weights,
                  int64_t numBlocks, int64_t blockSize);

  Status run(const StepInput &input, StepOutput &output) override;
  int64_t bytesPerBlock() const override;
  /// The most key splits (step parameter prefill_splits) a step run so far
  /// had.
  int64_t mostPrefillSplits() const { return mostPrefillSplits_; }
  /// The most splits a decode step's split attention kernel had so far.
  int64_t mostDecodeSplits() const { return mostDecodeSplits_; }
  /// Whether, between a fork and its join, the side stream's steps run
  /// before the main stream's (the default) or after.
  void setSideStreamFirst(bool first) { sideStreamFirst_ = first; }

private:
  /// A typed view of `size` elements of memory. An access outside them
  /// (a plan whose sizes do not cover what its kernels touch) reads NaN or
  /// writes nothing, and records the first such error in *error.
  struct Ref {
    char *data = nullptr;
    DType dtype = DType::F32;
    int64_t stride = 0; // a buffer's row stride, in elements
    int64_t size = 0;
    std::string name;
    std::string *error = nullptr;
    float get(int64_t i) const;
    void set(int64_t i, float v) const;
    /// Element i of i32 memory (step inputs, block tables).
    int32_t getInt(int64_t i) const;
    void setInt(int64_t i, int32_t v) const;
    bool inBounds(int64_t i) const;
  };
  Ref arg(const PlanArg &a);
  /// Records an error when a launch gives a kernel a buffer of another
  /// width than the row stride its spec was compiled for.
  void expectStrides(const PlanStep &step);
  std::string error_;
  int64_t scalar(const PlanArg &a) const;
  /// Runs block rows [0, gridX) of a launch, by its spec's family.
  void kernel(const PlanStep &step, int64_t gridX);
  void gemm(const PlanStep &step, int64_t m);
  // Block row t of each family (KernelSpec.h gives the arguments).
  void embedding(const PlanStep &step, int64_t t);
  void layerNorm(const PlanStep &step, int64_t t);
  void quantize(const PlanStep &step, int64_t t);
  void swiglu(const PlanStep &step, int64_t t);
  void residualSum(const PlanStep &step, int64_t t);
  void gatherRows(const PlanStep &step, int64_t t);
  void sampledTokens(const PlanStep &step, int64_t t);
  void gemv(const PlanStep &step, int64_t t);
  // PlanInterpreterAttention.cpp
  void kvAppend(const PlanStep &step, int64_t t);
  void attention(const PlanStep &step, int64_t t);
  void attentionMerge(const PlanStep &step, int64_t t);
  /// One token's attention over the keys of block (row, split).
  void attendToken(const PlanStep &step, int64_t token, int64_t row, int64_t split,
                   int64_t splits);
  /// The prefill kernel's keys [from, to) for `split` of `token`'s run in
  /// the tile of tokens from tileStart.
  std::pair<int64_t, int64_t> prefillSplitKeys(const PlanStep &step, int64_t token,
                                               int64_t tileStart, int64_t split,
                                               int64_t splits);
  struct PagedPool;
  /// The KV pool of an append (tables argument 4) or attention launch (3).
  PagedPool poolOf(const PlanStep &step, size_t tables);
  /// An argument's width: its column range's, else its buffer's.
  int64_t widthOf(const PlanArg &a) const;
  /// LayerNorm of row t (h values) of `in` with weight w, in f32.
  std::vector<float> normalizedRow(const Ref &in, const Ref &w, int64_t t, int64_t h) const;
  /// Row t quantized into the pairs and scales arguments.
  void storeQuantized(const std::vector<float> &row, int64_t t, const PlanArg &pairs,
                      const PlanArg &scales);
  /// Row t (f32) of a LayerNorm or SwiGLU launch into its output (argument
  /// 2), or, `quantized`, quantized from the f32 row as the recipe does (no
  /// rounding first) into its values and scales (arguments 2 and 3).
  void storeRow(const PlanStep &step, int64_t t, const std::vector<float> &row, bool quantized);
  /// FP8 rowwise quantization of `width` values into bytes and a scale.
  static void quantizeRow(const std::vector<float> &row, uint8_t *bytes, float *scale);

  const Manifest &manifest_;
  const WeightBuffer &weights_;
  int64_t blockSize_;
  StepLimits limits_;
  DType activations_;
  std::vector<char> pool_; // the KV pool all groups draw from
  std::map<std::string, std::vector<char>> buffers_;
  StepParamValues params_;
  const StepInput *input_ = nullptr;
  std::vector<int32_t> generatedRows_; // of input_
  std::vector<float> logits_;
  std::vector<int32_t> sampledTokens_;
  int64_t mostPrefillSplits_ = 0, mostDecodeSplits_ = 0;
  bool sideStreamFirst_ = true;
};

} // namespace cohere2c::test

#endif // COHERE2C_TEST_PLANINTERPRETER_H
