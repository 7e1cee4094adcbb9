//===- AttnToGPU.h - attn step -> gpu kernels + launch plan ------*- C++ -*-===//
#ifndef COHERE2C_CONVERSION_ATTNTOGPU_H
#define COHERE2C_CONVERSION_ATTNTOGPU_H

#include "mlir/Pass/Pass.h"

namespace mlir::cohere2c {

/// The gpu.module the kernels go into.
inline constexpr const char *kKernelModuleName = "cohere2c_kernels";
/// Replaces the attn step function by a gpu.module of kernels specialized by
/// each op's attributes and a plan.step of their launches and the GEMMs,
/// each value in a buffer of its own (plan-reuse-buffers shares them). The
/// step's inputs are device arrays as in the host ABI (AttnToHost.h): ids,
/// positions, seqs, per-group block tables [seqs, table width], the KV pool
/// all groups share, logit rows, logits [rows, vocab] f32.
#define GEN_PASS_DECL_CONVERTATTNTOGPU
#include "Conversion/Passes.h.inc"

} // namespace mlir::cohere2c

#endif // COHERE2C_CONVERSION_ATTNTOGPU_H
