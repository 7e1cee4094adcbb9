//===- RotaryAngle.cpp ----------------------------------------------------===//

#include "Conversion/RotaryAngle.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"

using namespace mlir;

std::pair<Value, Value> mlir::cohere2c::emitRotaryCosSin(ImplicitLocOpBuilder &b,
                                                         double theta, int64_t headDim,
                                                         Value position, Value pair) {
  Type f64 = b.getF64Type(), f32 = b.getF32Type();
  Value m = arith::SIToFPOp::create(
      b, f64, arith::IndexCastOp::create(b, b.getI64Type(), pair));
  Value exponent = arith::MulFOp::create(
      b, m, arith::ConstantOp::create(b, b.getF64FloatAttr(-2.0 / headDim)));
  Value invFreq = math::PowFOp::create(
      b, arith::ConstantOp::create(b, b.getF64FloatAttr(theta)), exponent);
  Value angle =
      arith::MulFOp::create(b, arith::SIToFPOp::create(b, f64, position), invFreq);
  return {arith::TruncFOp::create(b, f32, math::CosOp::create(b, angle)),
          arith::TruncFOp::create(b, f32, math::SinOp::create(b, angle))};
}
