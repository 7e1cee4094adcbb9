//===- Passes.h - attn dialect passes ----------------------------*- C++ -*-===//
#ifndef COHERE2C_DIALECT_ATTN_TRANSFORMS_PASSES_H
#define COHERE2C_DIALECT_ATTN_TRANSFORMS_PASSES_H

#include "mlir/Pass/Pass.h"

namespace mlir::cohere2c::attn {

#define GEN_PASS_DECL
#include "cohere2c/Dialect/Attn/Transforms/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "cohere2c/Dialect/Attn/Transforms/Passes.h.inc"

} // namespace mlir::cohere2c::attn

#endif // COHERE2C_DIALECT_ATTN_TRANSFORMS_PASSES_H
