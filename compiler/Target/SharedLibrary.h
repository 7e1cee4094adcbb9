//===- SharedLibrary.h - LLVM dialect module -> shared library --*- C++ -*-===//
#ifndef COHERE2C_TARGET_SHAREDLIBRARY_H
#define COHERE2C_TARGET_SHAREDLIBRARY_H

#include "Artifact/Manifest.h"
#include "Artifact/TextFiles.h"
#include "mlir/IR/BuiltinOps.h"
#include "llvm/Support/Error.h"

namespace mlir::cohere2c {

/// Adds `bytes` as the exported constant `name` (an i8 array) and, as
/// `name`_size, its length (i64). Kernel images travel so in cuda artifacts.
void addExportedBytes(ModuleOp module, llvm::StringRef name,
                      llvm::StringRef bytes);

/// Adds the checkpoint's text files, each as its exported byte array
/// (Artifact/TextFiles.h); files the checkpoint lacks add nothing.
void addTextFiles(ModuleOp module, const ::cohere2c::TextFiles &files);

/// Adds `manifestJson` as the exported constant `cohere2c_manifest` (and
/// its digest, `cohere2c_manifest_digest`: Artifact/Manifest.h),
/// translates `module` (LLVM dialect only) to LLVM IR, optimizes it at O3 for
/// generic x86-64 (the artifact runs on other machines than the build's),
/// writes an object file and links it with the system C compiler
/// (`cc -shared ... -lm`) into `outputPath`. Errors name the step that failed.
llvm::Error writeSharedLibrary(ModuleOp module, llvm::StringRef manifestJson,
                               llvm::StringRef outputPath);

} // namespace mlir::cohere2c

#endif // COHERE2C_TARGET_SHAREDLIBRARY_H
