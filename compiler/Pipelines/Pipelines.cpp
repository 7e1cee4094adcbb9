//===- Pipelines.cpp ------------------------------------------------------===//

#include "Pipelines/Pipelines.h"

#include "Conversion/AttnToHost/AttnToHost.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/InitAllDialects.h"
#include "mlir/InitAllExtensions.h"
#include "mlir/InitAllPasses.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Target/LLVMIR/Dialect/Builtin/BuiltinToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/LLVMIR/LLVMToLLVMIRTranslation.h"

namespace mlir::cohere2c {
#define GEN_PASS_REGISTRATION
#include "Conversion/Passes.h.inc"
} // namespace mlir::cohere2c

using namespace mlir;

void mlir::cohere2c::registerPipelineDependencies(DialectRegistry &registry) {
  registerAllDialects(registry);
  registerAllExtensions(registry);
  registerBuiltinDialectTranslation(registry);
  registerLLVMDialectTranslation(registry);
  static bool passesRegistered = [] {
    registerAllPasses();
    registerConversionPasses();
    return true;
  }();
  (void)passesRegistered;
}

namespace {

/// Runs `pipeline` (text without the outer builtin.module(...), MLIR-NOTES)
/// and fails on any error diagnostic, since some passes report errors and
/// still succeed.
llvm::Error runPipeline(ModuleOp module, StringRef pipeline) {
  std::string messages;
  llvm::raw_string_ostream os(messages);
  unsigned errors = 0;
  ScopedDiagnosticHandler handler(module.getContext(), [&](Diagnostic &d) {
    if (d.getSeverity() == DiagnosticSeverity::Error) {
      ++errors;
      os << d.getLocation() << ": " << d << "\n";
    }
    return success();
  });
  PassManager pm(module.getContext(), "builtin.module");
  if (failed(parsePassPipeline(pipeline, pm, os)))
    return llvm::createStringError("bad pipeline: " + messages);
  if (failed(pm.run(module)) || errors)
    return llvm::createStringError(messages.empty() ? "lowering failed"
                                                    : messages);
  return llvm::Error::success();
}

} // namespace

llvm::Error mlir::cohere2c::lowerAttnToHostLLVM(ModuleOp module) {
  return runPipeline(
      module,
      "convert-attn-to-host,canonicalize,cse,loop-invariant-code-motion,"
      "convert-scf-to-cf,expand-strided-metadata,lower-affine,"
      "finalize-memref-to-llvm,convert-math-to-llvm,convert-arith-to-llvm,"
      "convert-index-to-llvm,convert-cf-to-llvm,convert-func-to-llvm,"
      "reconcile-unrealized-casts");
}
