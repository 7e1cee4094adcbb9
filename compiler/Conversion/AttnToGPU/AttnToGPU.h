//===- AttnToGPU.h - attn step -> gpu kernels + launch plan ------*- C++ -*-===//
#ifndef COHERE2C_CONVERSION_ATTNTOGPU_H
#define COHERE2C_CONVERSION_ATTNTOGPU_H

#include "Artifact/LaunchPlan.h"

#include "mlir/Pass/Pass.h"

namespace mlir::cohere2c {

/// The gpu.module the kernels go into.
inline constexpr const char *kKernelModuleName = "cohere2c_kernels";
/// The module attribute holding the launch plan (LaunchPlan JSON).
inline constexpr const char *kLaunchPlanAttrName = "cohere2c.launch_plan";

/// Replaces the attn step function by a gpu.module of kernels specialized by
/// each op's attributes, and records the step as a LaunchPlan (kernel
/// launches and GEMMs over named buffers) in the module attribute
/// `cohere2c.launch_plan`. The step's inputs are device arrays as in the
/// host ABI (AttnToHost.h): ids, positions, seqs, per-group block tables
/// [seqs, table width] and pools, logit rows, logits [rows, vocab] f32.
#define GEN_PASS_DECL_CONVERTATTNTOGPU
#include "Conversion/Passes.h.inc"

} // namespace mlir::cohere2c

#endif // COHERE2C_CONVERSION_ATTNTOGPU_H
