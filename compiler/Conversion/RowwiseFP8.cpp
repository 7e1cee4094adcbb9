//===- RowwiseFP8.cpp -----------------------------------------------------===//

#include "Conversion/RowwiseFP8.h"

#include "Artifact/Precision.h"
#include "mlir/Dialect/Arith/IR/Arith.h"

using namespace mlir;

mlir::cohere2c::RowwiseScale
mlir::cohere2c::emitRowwiseScale(ImplicitLocOpBuilder &b, Value amax) {
  auto constant = [&](double v) {
    return arith::ConstantOp::create(b, b.getF64FloatAttr(v));
  };
  Value wide = arith::ExtFOp::create(b, b.getF64Type(), amax);
  Value scale = arith::MaximumFOp::create(
      b, arith::DivFOp::create(b, wide, constant(::cohere2c::kE4M3Max)),
      constant(::cohere2c::kTokenScaleFloor));
  return {scale, arith::DivFOp::create(b, constant(1), scale)};
}

Value mlir::cohere2c::emitScaledQuotient(ImplicitLocOpBuilder &b, Value x,
                                         const RowwiseScale &s) {
  Value wide = arith::ExtFOp::create(b, b.getF64Type(), x);
  return arith::TruncFOp::create(b, b.getF32Type(),
                                 arith::MulFOp::create(b, wide, s.reciprocal));
}
