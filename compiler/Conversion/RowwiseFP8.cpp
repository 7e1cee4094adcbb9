//===- RowwiseFP8.cpp -----------------------------------------------------===//

#include "Conversion/RowwiseFP8.h"

#include "Artifact/Precision.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"

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
  Value reciprocal = arith::DivFOp::create(b, constant(1), scale);
  Type f32 = b.getF32Type();
  Value hi = arith::TruncFOp::create(b, f32, reciprocal);
  Value lo = arith::TruncFOp::create(
      b, f32,
      arith::SubFOp::create(b, reciprocal,
                            arith::ExtFOp::create(b, b.getF64Type(), hi)));
  return {scale, hi, lo};
}

Value mlir::cohere2c::emitScaledQuotient(ImplicitLocOpBuilder &b, Value x,
                                         const RowwiseScale &s) {
  Value product = arith::MulFOp::create(b, x, s.reciprocalHi);
  Value error = math::FmaOp::create(b, x, s.reciprocalHi,
                                    arith::NegFOp::create(b, product));
  Value tail = math::FmaOp::create(b, x, s.reciprocalLo, error);
  return arith::AddFOp::create(b, product, tail);
}
