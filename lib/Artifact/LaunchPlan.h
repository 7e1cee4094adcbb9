//===- LaunchPlan.h - The step of a cuda artifact, as launches ------------===//
//
// A cuda artifact's step is a fixed sequence of kernel launches and GEMMs,
// recorded by the compiler (convert-attn-to-gpu) and replayed by the runtime
// on a main and a side CUDA stream that fork and join (and so capturable in
// a CUDA graph). Sizes that change from step to step (tokens, logits rows,
// block table width) are step parameters (StepParams.h); everything else
// was fixed at compile time.
//
//===----------------------------------------------------------------------===//
#ifndef COHERE2C_ARTIFACT_LAUNCHPLAN_H
#define COHERE2C_ARTIFACT_LAUNCHPLAN_H

#include "Artifact/KernelSpec.h"
#include "Artifact/StepParams.h"
#include "Artifact/WeightLayout.h"
#include "Model/SafeTensors.h"
#include "Support/Status.h"

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace cohere2c {

/// An activation buffer of the step: [rows, width] of dtype, rows being the
/// value of the step parameter `rows`.
struct PlanBuffer {
  std::string name;
  int64_t width = 0;
  DType dtype = DType::F32;
  StepParam rows = StepParam::Tokens;
};

/// What an executor provides each step, besides buffers and weights: the
/// step's token ids, positions, sequence rows ([tokens] i32), generated
/// flags ([tokens] i32) and the indices of the generated tokens
/// ([decode_tokens] i32); per KV group (PlanArg::group, an index into the
/// manifest's kv_groups) its block tables ([seqs, table_width] i32); the
/// KV pool every group's blocks are in; the rows wanting logits ([rows] i32),
/// the logits ([rows, vocab] f32), each logits row's sampling temperature
/// ([rows] f32, 0 = greedy) and Gumbel noise seed ([rows] u64,
/// GumbelNoise.h), and the token sampled from each row ([rows] i32).
enum class PlanInput : uint8_t {
  Ids,
  Positions,
  Seqs,
  Generated,
  GeneratedRows,
  KVTables,
  KVPool,
  LogitRows,
  Logits,
  Temperatures,
  NoiseSeeds,
  SampledTokens,
};
inline constexpr int kNumPlanInputs = (int)PlanInput::SampledTokens + 1;
/// The name of an input in a plan's text ("ids", "kv_tables", ...).
std::string_view planInputName(PlanInput input);
/// The input of that name, or none.
std::optional<PlanInput> planInputNamed(std::string_view name);
/// Whether `input` is one per KV group (its block tables).
inline bool isKVInput(PlanInput input) { return input == PlanInput::KVTables; }

/// A kernel argument.
struct PlanArg {
  enum class Kind {
    Buffer, // a PlanBuffer, by name
    Weight, // a weight (WeightLayout), by name
    Input,  // a step input (input)
    Param,  // a step parameter (param), as an i64
    Int     // an i64 constant (value)
  };
  Kind kind = Kind::Int;
  std::string name; // Buffer, Weight
  PlanInput input = PlanInput::Ids;
  int64_t group = 0; // Input kv_tables: the KV group
  StepParam param = StepParam::Tokens;
  int64_t value = 0;
  // Buffer: the columns [column, column + width) of each row (width 0: all
  // of them), e.g. k inside the output of the GEMM that merged q, k and v.
  // A kernel reads such a view with the buffer's width as its row stride.
  // Weight: width > 0 is the number of elements the kernel reads from the
  // weight's start on (a merged group's entries, laid out back to back).
  int64_t column = 0, width = 0;

  static PlanArg buffer(std::string name) { return {Kind::Buffer, std::move(name)}; }
  static PlanArg weight(std::string name, int64_t elements = 0) {
    PlanArg a{Kind::Weight, std::move(name)};
    a.width = elements;
    return a;
  }
  static PlanArg of(PlanInput input, int64_t group = 0) {
    PlanArg a{Kind::Input};
    a.input = input;
    a.group = group;
    return a;
  }
  static PlanArg of(StepParam param) {
    PlanArg a{Kind::Param};
    a.param = param;
    return a;
  }
  static PlanArg constant(int64_t value) {
    PlanArg a;
    a.value = value;
    return a;
  }
};

/// A step of the plan. The runtime replays kernels and GEMMs on two
/// streams: the main one, and a side one for branches of the model that
/// need nothing the main stream computes after their inputs (a layer's MLP,
/// which the attention chain of the same layer does not feed). Fork: the
/// side stream waits for what the main stream has enqueued so far; Join:
/// the main stream waits for the side stream. Steps marked `side` lie
/// between a Fork and its Join (LaunchPlan::check). Between the two, no
/// buffer that one stream writes is read or written by the other (the
/// compiler frees no buffer for reuse before the Join). A step whose
/// parameter side_stream is 0 runs every step on the main stream, in plan
/// order (forks and joins do nothing).
struct PlanStep {
  enum class Kind { Kernel, Gemm, Fork, Join };
  Kind kind = Kind::Kernel;
  bool side = false; // Kernel, Gemm: run on the side stream
  // Kernel: grid (gridX, gridY, 1), block (blockX, 1, 1); gridX is the
  // value of the step parameter gridX (a launch with gridX 0 is skipped).
  // The kernel's symbol, and what it computes (KernelSpec.h).
  std::string kernel;
  KernelSpec spec;
  StepParam gridX = StepParam::Tokens;
  int64_t gridY = 1, blockX = 1;
  std::vector<PlanArg> args;
  // Gemm: c[m, n] = alpha * a[m, k] @ weight[n, k]^T, m = the parameter
  // m; a and c are buffers or inputs (args[0] = a, args[1] = c).
  // weight[n, k] starts at the named weight and may span the entries laid
  // out after it (projections of one input merged into one GEMM).
  // FP8 rowwise GEMM when weightScale names the weight's per-output-channel
  // scales: a is e4m3 with per-token scales args[2], c[m, n] = alpha *
  // a_scale[m] * w_scale[n] * sum_k a[m, k] w[n, k].
  // plus: the last argument is an addend [m, n] of c's dtype, added to the
  // product (cuBLASLt's beta = 1); it may be c itself.
  std::string weight, weightScale;
  StepParam m = StepParam::Tokens;
  int64_t n = 0, k = 0;
  double alpha = 1.0;
  bool plus = false;
};

struct LaunchPlan {
  std::vector<PlanBuffer> buffers;
  std::vector<PlanStep> steps;
  /// The kernel generating random weights (RandomWeights.h) of each storage
  /// dtype among the weights: RandomUniform for F32 and BF16,
  /// RandomUniformFP8 for F8E4M3 (KernelSpec.h gives their arguments).
  std::map<DType, std::string> weightFills;

  std::string toJson() const;
  /// Errors name `source` and the malformed entry.
  static StatusOr<LaunchPlan> parse(const std::string &json,
                                    const std::string &source);
  /// That every name resolves and every size is in range, so that the
  /// runtime never launches with a missing pointer: buffers (unique, width
  /// > 0, views inside them), weights (in `weights`; a GEMM's [n, k] weight
  /// and its n scales inside the weights), step inputs (a KV input's group
  /// below `kvGroups`), kernel grids (a grid_sync kernel's grid_x
  /// gemv_token)
  /// (grid_y in [1, 65535], block_x in [1, 1024]), forks and joins (paired,
  /// not nested, side steps between them, no buffer column or step input
  /// named by both streams between them). Errors name `source` and the
  /// entry.
  Status check(const WeightLayout &weights, int64_t kvGroups,
               const std::string &source) const;
};

} // namespace cohere2c

#endif // COHERE2C_ARTIFACT_LAUNCHPLAN_H
