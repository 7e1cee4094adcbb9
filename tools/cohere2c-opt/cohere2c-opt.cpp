//===- cohere2c-opt.cpp - mlir-opt with the cohere2c dialects and pipelines===//
//
// Example: cohere2c-opt --convert-attn-to-host test/Conversion/AttnToHost/attn-to-host.mlir
//
//===----------------------------------------------------------------------===//

#include "Pipelines/Pipelines.h"
#include "cohere2c/Dialect/Attn/IR/Attn.h"
#include "cohere2c/Dialect/Plan/IR/Plan.h"

#include "mlir/IR/DialectRegistry.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"

int main(int argc, char **argv) {
  mlir::DialectRegistry registry;
  mlir::cohere2c::registerPipelineDependencies(registry);
  registry.insert<mlir::cohere2c::attn::AttnDialect, mlir::cohere2c::plan::PlanDialect>();
  return mlir::asMainReturnCode(mlir::MlirOptMain(
      argc, argv,
      "cohere2c-opt: mlir-opt with the attn and plan dialects, their passes and "
      "the pipelines\n\n"
      "  cohere2c-opt --attn-quantize-fp8-rowwise --cse step.mlir\n"
      "  cohere2c-opt --cohere2c-lower-to-host step.mlir\n"
      "  cohere2c-opt --cohere2c-lower-to-cuda --mlir-print-ir-after-all step.mlir\n",
      registry));
}
