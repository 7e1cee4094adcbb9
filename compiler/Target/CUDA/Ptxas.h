//===- Ptxas.h - The CUDA toolkit: where it is, and ptxas --------*- C++ -*-===//
#ifndef COHERE2C_TARGET_CUDA_PTXAS_H
#define COHERE2C_TARGET_CUDA_PTXAS_H

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <string>

namespace mlir::cohere2c {

/// The CUDA toolkit folder: $CUDA_HOME, $CUDA_PATH or /usr/local/cuda,
/// the first that holds bin/ptxas; an error says where it looked.
llvm::Expected<std::string> findCudaToolkit();

/// `toolkit`/bin/ptxas -arch=sm_90a -O3 on `ptx`; returns the cubin. Errors
/// carry ptxas's output.
llvm::Expected<std::string> assemblePtx(llvm::StringRef ptx, llvm::StringRef toolkit);

} // namespace mlir::cohere2c

#endif // COHERE2C_TARGET_CUDA_PTXAS_H
