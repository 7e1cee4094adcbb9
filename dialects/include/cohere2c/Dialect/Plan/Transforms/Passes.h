//===- Passes.h - plan dialect passes ----------------------------*- C++ -*-===//
#ifndef COHERE2C_DIALECT_PLAN_TRANSFORMS_PASSES_H
#define COHERE2C_DIALECT_PLAN_TRANSFORMS_PASSES_H

#include "mlir/Pass/Pass.h"

namespace mlir::cohere2c::plan {

#define GEN_PASS_DECL
#include "cohere2c/Dialect/Plan/Transforms/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "cohere2c/Dialect/Plan/Transforms/Passes.h.inc"

} // namespace mlir::cohere2c::plan

#endif // COHERE2C_DIALECT_PLAN_TRANSFORMS_PASSES_H
