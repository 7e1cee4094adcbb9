//===- Pipelines.h - attn -> target code pipelines ---------------*- C++ -*-===//
#ifndef COHERE2C_PIPELINES_PIPELINES_H
#define COHERE2C_PIPELINES_PIPELINES_H

#include "mlir/IR/BuiltinOps.h"
#include "llvm/Support/Error.h"

#include <string>

namespace mlir::cohere2c {

/// Registers what the pipelines need in `registry`: the dialects they create,
/// the ConvertToLLVM interfaces, the LLVM IR translations.
void registerPipelineDependencies(DialectRegistry &registry);

/// Lowers an attn module (ModelToAttn.h) to the LLVM dialect for the host
/// CPU: convert-attn-to-host, then scf/memref/math/arith/func -> llvm.
/// Errors carry the diagnostics the passes printed.
llvm::Error lowerAttnToHostLLVM(ModuleOp module);

/// The compiled kernels of a cuda module: PTX for sm_90a and, assembled
/// from it by ptxas, the cubin; and the launch plan (LaunchPlan JSON).
struct CudaKernels {
  std::string ptx, cubin, launchPlan;
};

/// Lowers an attn module to kernels for sm_90a: convert-attn-to-gpu, then
/// gpu/scf/math -> NVVM -> PTX (gpu-module-to-binary, format isa, libdevice
/// from `cudaToolkit`), then `cudaToolkit`/bin/ptxas -arch=sm_90a.
/// Errors carry the diagnostics of the passes or ptxas's output.
llvm::Expected<CudaKernels> lowerAttnToCuda(ModuleOp module,
                                            llvm::StringRef cudaToolkit);

/// The CUDA toolkit folder: $CUDA_HOME, $CUDA_PATH or /usr/local/cuda,
/// the first that holds bin/ptxas; an error says where it looked.
llvm::Expected<std::string> findCudaToolkit();

} // namespace mlir::cohere2c

#endif // COHERE2C_PIPELINES_PIPELINES_H
