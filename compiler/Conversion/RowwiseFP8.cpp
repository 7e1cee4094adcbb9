//===- RowwiseFP8.cpp -----------------------------------------------------===//

#include "Conversion/RowwiseFP8.h"

#include "mlir/Dialect/Arith/IR/Arith.h"

using namespace mlir;

mlir::cohere2c::RowwiseScale
mlir::cohere2c::emitRowwiseScale(ImplicitLocOpBuilder &b, Value amax) {
  auto constant = [&](double v) {
    return arith::ConstantOp::create(b, b.getF64FloatAttr(v));
  };
  Value wide = arith::ExtFOp::create(b, b.getF64Type(), amax);
  Value scale = arith::MaximumFOp::create(
      b, arith::DivFOp::create(b, wide, constant(448)),
      constant(1.0 / (448.0 * 512.0)));
  return {scale, arith::DivFOp::create(b, constant(1), scale)};
}

Value mlir::cohere2c::emitScaledQuotient(ImplicitLocOpBuilder &b, Value x,
                                         const RowwiseScale &s) {
  Value wide = arith::ExtFOp::create(b, b.getF64Type(), x);
  return arith::TruncFOp::create(b, b.getF32Type(),
                                 arith::MulFOp::create(b, wide, s.reciprocal));
}
