//===- Pipelines.h - attn -> target code pipelines ---------------*- C++ -*-===//
//
// The two lowerings as registered pass pipelines, so that cohere2c-opt runs
// each stage (--mlir-print-ir-after-all shows them) and the compiler runs
// exactly the same passes:
//   cohere2c-lower-to-host: the attn passes, convert-attn-to-host, then
//     scf/memref/math/arith/func -> llvm;
//   cohere2c-lower-to-cuda{toolkit=DIR}: the attn passes,
//     convert-attn-to-gpu, plan-reuse-buffers, gpu/scf/math -> NVVM, PTX
//     for sm_90a (gpu-module-to-binary, libdevice from the toolkit).
//
//===----------------------------------------------------------------------===//
#ifndef COHERE2C_PIPELINES_PIPELINES_H
#define COHERE2C_PIPELINES_PIPELINES_H

#include "Artifact/LaunchPlan.h"

#include "mlir/IR/BuiltinOps.h"
#include "llvm/Support/Error.h"

#include <string>

namespace mlir::cohere2c {

/// Registers what the pipelines need in `registry` (the dialects they
/// create, the ConvertToLLVM interfaces, the LLVM IR translations), and the
/// passes and pipelines themselves.
void registerPipelineDependencies(DialectRegistry &registry);

/// Runs cohere2c-lower-to-host on an attn module (ModelToAttn.h). Errors
/// carry the diagnostics the passes printed.
llvm::Error lowerAttnToHostLLVM(ModuleOp module);

/// The compiled kernels of a cuda module: PTX for sm_90a and, assembled
/// from it by ptxas, the cubin; the launch plan, as the artifact carries it
/// and as the plan.step IR it was read from.
struct CudaKernels {
  std::string ptx, cubin, planIR;
  ::cohere2c::LaunchPlan launchPlan;
};

/// Runs cohere2c-lower-to-cuda on an attn module (libdevice from
/// `cudaToolkit`), then `cudaToolkit`/bin/ptxas -arch=sm_90a. Errors carry
/// the diagnostics of the passes or ptxas's output.
llvm::Expected<CudaKernels> lowerAttnToCuda(ModuleOp module, llvm::StringRef cudaToolkit);

} // namespace mlir::cohere2c

#endif // COHERE2C_PIPELINES_PIPELINES_H
