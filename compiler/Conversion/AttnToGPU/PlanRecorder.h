//===- PlanRecorder.h - the launch plan convert-attn-to-gpu records -*- C++ -*-===//
//
// The step as the cuda lowering records it: a plan.step holding the
// buffers its values live in (declared first, in the order they were made)
// and its kernel launches and GEMMs, in order. Stream and buffer planning
// come later, as passes on the plan (plan-assign-streams,
// plan-reuse-buffers).
//
//===----------------------------------------------------------------------===//
#ifndef COHERE2C_CONVERSION_ATTNTOGPU_PLANRECORDER_H
#define COHERE2C_CONVERSION_ATTNTOGPU_PLANRECORDER_H

#include "cohere2c/Dialect/Plan/IR/Plan.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/IR/ImplicitLocOpBuilder.h"

#include <map>
#include <optional>
#include <string>

namespace mlir::cohere2c::attn_to_gpu {

using ::cohere2c::KernelSpec;
using ::cohere2c::PlanArg;
using ::cohere2c::StepParam;

/// Elements per token of a step value: [tokens, width], or [tokens] scales.
inline int64_t widthOf(RankedTensorType type) {
  return type.getRank() == 2 ? type.getDimSize(1) : 1;
}

/// A generated kernel: its symbol in the gpu.module and what it computes
/// (carried by every plan.launch of it).
struct GeneratedKernel {
  std::string name;
  KernelSpec spec;
};

/// Records launches of the kernels of `kernels` and GEMMs into `step`, at
/// the location `at` is set to (the attn op being lowered).
class PlanRecorder {
protected:
  PlanRecorder(plan::StepOp step, gpu::GPUModuleOp kernels, ImplicitLocOpBuilder &at)
      : planStep(step), kernelModule(kernels), at(at) {}

  /// A new buffer of `width` elements of `dtype` per row, as many rows as
  /// the step parameter `rows` says (plan-reuse-buffers shares them later).
  std::string allocate(int64_t width, Type dtype, StepParam rows = StepParam::Tokens);
  /// The buffer holding `v` ([tokens, width] or [tokens]), allocated for it.
  PlanArg bufferFor(Value v);
  /// The row stride (elements) of the buffer a view is in.
  int64_t strideOf(const PlanArg &view) const { return bufferWidths.at(view.name); }
  /// A launch of `kernel` over grid (gridX, gridY) of `block` threads.
  void kernelStep(const GeneratedKernel &kernel, StepParam gridX, int64_t gridY, int64_t block,
                  ArrayRef<PlanArg> args);
  /// c = alpha a weight^T [+ addend] over m rows; `scales`: an FP8 GEMM's
  /// weight scales and a's per-token scales.
  void gemmStep(PlanArg a, PlanArg c, StringRef weight, StepParam m, int64_t n,
                int64_t k, double alpha,
                std::optional<std::pair<StringRef, PlanArg>> scales = {},
                std::optional<PlanArg> addend = {});

  plan::StepOp planStep;
  /// The buffer view of each value lowered so far.
  DenseMap<Value, PlanArg> buffers;

private:
  /// `a` as an argument of a plan.launch or plan.gemm.
  Attribute argAttr(const PlanArg &a);
  /// A builder appending steps to the plan.step.
  OpBuilder planEnd() { return OpBuilder::atBlockEnd(&planStep.getBody().front()); }

  gpu::GPUModuleOp kernelModule;
  ImplicitLocOpBuilder &at;
  std::map<std::string, int64_t> bufferWidths;
  // The last plan.buffer declared (the next goes after it).
  Operation *lastBuffer = nullptr;
};

} // namespace mlir::cohere2c::attn_to_gpu

#endif // COHERE2C_CONVERSION_ATTNTOGPU_PLANRECORDER_H
