//===- cohere2c-opt.cpp - mlir-opt with the attn dialect and its passes ---===//
//
// Example: cohere2c-opt --verify-diagnostics test/Dialect/Attn/invalid.mlir
//
//===----------------------------------------------------------------------===//

#include "cohere2c/Dialect/Attn/IR/Attn.h"

#include "mlir/IR/DialectRegistry.h"
#include "mlir/InitAllDialects.h"
#include "mlir/InitAllExtensions.h"
#include "mlir/InitAllPasses.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"

int main(int argc, char **argv) {
  mlir::registerAllPasses();
  mlir::DialectRegistry registry;
  mlir::registerAllDialects(registry);
  mlir::registerAllExtensions(registry);
  registry.insert<mlir::cohere2c::attn::AttnDialect>();
  return mlir::asMainReturnCode(mlir::MlirOptMain(
      argc, argv, "cohere2c optimizer driver\n", registry));
}
