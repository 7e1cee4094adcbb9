//===- Pipelines.h - attn -> target code pipelines ---------------*- C++ -*-===//
#ifndef COHERE2C_PIPELINES_PIPELINES_H
#define COHERE2C_PIPELINES_PIPELINES_H

#include "mlir/IR/BuiltinOps.h"
#include "llvm/Support/Error.h"

namespace mlir::cohere2c {

/// Registers what the pipelines need in `registry`: the dialects they create,
/// the ConvertToLLVM interfaces, the LLVM IR translations.
void registerPipelineDependencies(DialectRegistry &registry);

/// Lowers an attn module (ModelToAttn.h) to the LLVM dialect for the host
/// CPU: convert-attn-to-host, then scf/memref/math/arith/func -> llvm.
/// Errors carry the diagnostics the passes printed.
llvm::Error lowerAttnToHostLLVM(ModuleOp module);

} // namespace mlir::cohere2c

#endif // COHERE2C_PIPELINES_PIPELINES_H
