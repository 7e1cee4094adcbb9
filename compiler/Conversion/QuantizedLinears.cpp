//===- QuantizedLinears.cpp -----------------------------------------------===//

#include "Conversion/QuantizedLinears.h"

#include "cohere2c/Dialect/Attn/IR/Attn.h"

using namespace mlir;

LogicalResult mlir::cohere2c::requireQuantizedLinears(Operation *root) {
  WalkResult unquantized = root->walk([&](attn::LinearOp op) {
    if (!op.getWeightScaleAttr())
      return WalkResult::advance();
    op.emitOpError("has an fp8 weight: run attn-quantize-fp8-rowwise first");
    return WalkResult::interrupt();
  });
  return failure(unquantized.wasInterrupted());
}
