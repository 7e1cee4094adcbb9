//===- Plan.h - The plan dialect ---------------------------------*- C++ -*-===//
//
// The launch plan of a cuda step as IR (PlanOps.td); the artifact's
// LaunchPlan (Artifact/LaunchPlan.h) is its serialized form.
//
//===----------------------------------------------------------------------===//
#ifndef COHERE2C_DIALECT_PLAN_IR_PLAN_H
#define COHERE2C_DIALECT_PLAN_IR_PLAN_H

#include "Artifact/KernelSpec.h"
#include "Artifact/LaunchPlan.h"
#include "Artifact/StepParams.h"

#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Dialect.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/IR/RegionKindInterface.h"
#include "mlir/IR/SymbolTable.h"
#include "llvm/ADT/Hashing.h"

namespace cohere2c {
/// For the uniquing of #plan.kernel attributes.
inline llvm::hash_code hash_value(const KernelSpec &s) {
  return llvm::hash_combine(
      s.family, s.rows, s.rope, s.window, s.outF32, s.addend,
      llvm::hash_combine_range(s.strides.begin(), s.strides.end()));
}
} // namespace cohere2c

namespace mlir::cohere2c::plan {
/// Parse a step parameter or input by its name (StepParams.h, LaunchPlan.h).
FailureOr<::cohere2c::StepParam> parseStepParam(AsmParser &parser);
FailureOr<::cohere2c::PlanInput> parsePlanInput(AsmParser &parser);
/// `family[, rows = R][, rope][, window = W][, out_f32][, addend][, grid_sync]
/// [, strides = [a, ...]]`.
FailureOr<::cohere2c::KernelSpec> parseKernelSpec(AsmParser &parser);
void printKernelSpec(AsmPrinter &printer, const ::cohere2c::KernelSpec &spec);
/// The name of the gpu.func attribute holding a kernel's #plan.kernel.
inline constexpr llvm::StringLiteral kKernelSpecAttr = "plan.kernel";
/// The plan.step attribute naming the weight-fill kernel of each storage
/// dtype ({BF16 = @random_uniform_bf16, ...}; LaunchPlan::weightFills).
inline constexpr llvm::StringLiteral kWeightFillAttrName = "plan.weight_fill";

/// The artifact's name for an element type: f8E4M3FN, bf16, f16, else f32.
inline ::cohere2c::DType dtypeOf(Type t) {
  if (isa<Float8E4M3FNType>(t))
    return ::cohere2c::DType::F8E4M3;
  if (t.isBF16())
    return ::cohere2c::DType::BF16;
  if (t.isF16())
    return ::cohere2c::DType::F16;
  return ::cohere2c::DType::F32;
}
} // namespace mlir::cohere2c::plan

#include "cohere2c/Dialect/Plan/IR/PlanDialect.h.inc"

#define GET_ATTRDEF_CLASSES
#include "cohere2c/Dialect/Plan/IR/PlanAttrs.h.inc"

#define GET_OP_CLASSES
#include "cohere2c/Dialect/Plan/IR/PlanOps.h.inc"

#endif // COHERE2C_DIALECT_PLAN_IR_PLAN_H
