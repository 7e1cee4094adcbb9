//===- ScalarBuilders.h - Index and f32 arithmetic for the lowerings ------===//
//
// The one-line builders that both lowerings (AttnToHost's step function and
// AttnToGPU's kernels) write their loops with: index and f32 constants,
// index casts, and integer and float sums and products. A lowering derives
// from ScalarBuilders and builds through `b`.
//
//===----------------------------------------------------------------------===//
#ifndef COHERE2C_CONVERSION_SCALARBUILDERS_H
#define COHERE2C_CONVERSION_SCALARBUILDERS_H

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/IR/ImplicitLocOpBuilder.h"

namespace mlir::cohere2c {

class ScalarBuilders {
protected:
  /// Builds through `b`, which must outlive this object.
  explicit ScalarBuilders(ImplicitLocOpBuilder &b) : b(b) {}

  /// An index constant.
  Value index(int64_t v) { return arith::ConstantIndexOp::create(b, v); }
  /// An f32 constant (v rounded to f32).
  Value f32(double v) {
    return arith::ConstantOp::create(b, b.getF32FloatAttr(v));
  }
  /// An integer (i32, i64) as an index.
  Value toIndex(Value v) {
    return arith::IndexCastOp::create(b, b.getIndexType(), v);
  }
  /// Integer (index) x + y and x * y.
  Value add(Value x, Value y) { return arith::AddIOp::create(b, x, y); }
  Value mul(Value x, Value y) { return arith::MulIOp::create(b, x, y); }
  /// Float x + y, x * y and x - y.
  Value addf(Value x, Value y) { return arith::AddFOp::create(b, x, y); }
  Value mulf(Value x, Value y) { return arith::MulFOp::create(b, x, y); }
  Value subf(Value x, Value y) { return arith::SubFOp::create(b, x, y); }
  /// x * y + z rounded once (one fma.rn.f32 on the GPU, where a mul.rn and
  /// an add.rn would be two instructions that ptxas may not contract).
  Value fma(Value x, Value y, Value z) { return math::FmaOp::create(b, x, y, z); }

  ImplicitLocOpBuilder &b;
};

} // namespace mlir::cohere2c

#endif // COHERE2C_CONVERSION_SCALARBUILDERS_H
