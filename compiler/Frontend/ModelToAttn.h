//===- ModelToAttn.h - Cohere2 model description -> attn module -*- C++ -*-===//
#ifndef COHERE2C_FRONTEND_MODELTOATTN_H
#define COHERE2C_FRONTEND_MODELTOATTN_H

#include "Artifact/WeightLayout.h"
#include "Model/Config.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"

namespace mlir::cohere2c {

/// The name of the function that runs one model step.
inline constexpr const char *kStepFunctionName = "cohere2c_step";

/// Builds the attn module of a model: one `attn.weight` per entry of
/// `weights` (shape, element type and byte offset), and
///   func.func @cohere2c_step(%ids: tensor<?xi32>, %positions: tensor<?xi32>)
///       -> tensor<?x{vocab}xf32>
/// with, per layer i, the op sequence
///   layer_norm -> linear q, k, v -> attention (kv_slot = i, window and
///   position from the layer kind) -> linear o; linear gate, up -> swiglu ->
///   linear down; residual_sum(x, attention, mlp)
/// and then the final layer_norm and the tied-embedding logits.
/// Activations have the element type of the weights (f32 or bf16); the
/// residual stream (embedding, o_proj, down_proj and residual_sum results)
/// is f32.
/// `context` must have the attn and func dialects loaded.
OwningOpRef<ModuleOp> buildAttnModule(MLIRContext &context,
                                      const ::cohere2c::ModelConfig &config,
                                      const ::cohere2c::WeightLayout &weights);

} // namespace mlir::cohere2c

#endif // COHERE2C_FRONTEND_MODELTOATTN_H
