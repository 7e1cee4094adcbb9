//===- RotaryAngle.h - The rotary embedding, shared by lowerings ---------===//
#ifndef COHERE2C_CONVERSION_ROTARYANGLE_H
#define COHERE2C_CONVERSION_ROTARYANGLE_H

#include "mlir/IR/ImplicitLocOpBuilder.h"

#include <utility>

namespace mlir::cohere2c {

/// cos and sin (f32) of the rotary angle of pair `pair` (index) at `position`
/// (i32): position * theta^(-2 pair / headDim) (Su et al., RoFormer; GPT-J's
/// interleaved pairs). The angle is formed and reduced to [-pi, pi] in f64,
/// so that long positions keep it exact to f32 (as the float64 oracle's);
/// cos and sin are computed in f32 at the reduced angle rounded to f32, so
/// their absolute error is at most about 2^-23 (the rounding of an angle
/// up to pi), not an ulp of the value: near a zero of cos or sin the
/// relative error is large, which the rotation's absolute use tolerates.
std::pair<Value, Value> emitRotaryCosSin(ImplicitLocOpBuilder &b, double theta,
                                         int64_t headDim, Value position, Value pair);

/// The interleaved pair (x0, x1) = (x[2m], x[2m+1]) rotated by the angle
/// whose cos and sin are given (f32): (x0 cos - x1 sin, x1 cos + x0 sin).
std::pair<Value, Value> emitRotatePair(ImplicitLocOpBuilder &b, Value x0, Value x1, Value cos,
                                       Value sin);

} // namespace mlir::cohere2c

#endif // COHERE2C_CONVERSION_ROTARYANGLE_H
