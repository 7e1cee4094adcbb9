//===- RotaryAngle.cpp ----------------------------------------------------===//

#include "Conversion/RotaryAngle.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"

#include <cmath>

using namespace mlir;

std::pair<Value, Value> mlir::cohere2c::emitRotaryCosSin(ImplicitLocOpBuilder &b,
                                                         double theta, int64_t headDim,
                                                         Value position, Value pair) {
  Type f64 = b.getF64Type(), f32 = b.getF32Type();
  auto constant = [&](double v) { return arith::ConstantOp::create(b, b.getF64FloatAttr(v)); };
  Value m = arith::SIToFPOp::create(
      b, f64, arith::IndexCastOp::create(b, b.getI64Type(), pair));
  // theta^(-2 m / headDim) = 2^(m (-2 log2(theta) / headDim)).
  Value invFreq = math::Exp2Op::create(
      b, arith::MulFOp::create(b, m, constant(-2.0 * std::log2(theta) / headDim)));
  Value angle =
      arith::MulFOp::create(b, arith::SIToFPOp::create(b, f64, position), invFreq);
  // r = angle - 2 pi k, k = floor(angle / 2 pi + 1/2), with 2 pi as hi + lo
  // (hi has 27 significant bits, so k hi is exact for k < 2^26): |r| <= pi
  // up to rounding, with about the f64 product's error. Then cos and sin of
  // r rounded to f32, whose small-argument paths are short. (A first-order
  // correction for that rounding, cos r = cos rf - d sin rf with d = r - rf,
  // made ptxas spill 444 bytes in the sliding prefill kernel instead of 76,
  // for an error far below the bf16 rounding of q and k there.)
  double twoPiHi = 6.2831853032112121582031250, twoPiLo = 2.0 * M_PI - twoPiHi;
  Value k = math::FloorOp::create(
      b, arith::AddFOp::create(b, arith::MulFOp::create(b, angle, constant(0.5 / M_PI)),
                               constant(0.5)));
  Value r = arith::SubFOp::create(b, angle, arith::MulFOp::create(b, k, constant(twoPiHi)));
  r = arith::SubFOp::create(b, r, arith::MulFOp::create(b, k, constant(twoPiLo)));
  Value reduced = arith::TruncFOp::create(b, f32, r);
  return {math::CosOp::create(b, reduced), math::SinOp::create(b, reduced)};
}

std::pair<Value, Value> mlir::cohere2c::emitRotatePair(ImplicitLocOpBuilder &b, Value x0, Value x1,
                                                       Value cos, Value sin) {
  auto mul = [&](Value x, Value y) { return arith::MulFOp::create(b, x, y); };
  Value first = arith::SubFOp::create(b, mul(x0, cos), mul(x1, sin));
  Value second = arith::AddFOp::create(b, mul(x1, cos), mul(x0, sin));
  return {first, second};
}
