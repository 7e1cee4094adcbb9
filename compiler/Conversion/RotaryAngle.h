//===- RotaryAngle.h - The rotary embedding's angle, shared by lowerings --===//
#ifndef COHERE2C_CONVERSION_ROTARYANGLE_H
#define COHERE2C_CONVERSION_ROTARYANGLE_H

#include "mlir/IR/ImplicitLocOpBuilder.h"

#include <utility>

namespace mlir::cohere2c {

/// cos and sin (f32) of the rotary angle of pair `pair` (index) at `position`
/// (i32): position * theta^(-2 pair / headDim) (Su et al., RoFormer; GPT-J's
/// interleaved pairs). The angle is formed and reduced to [-pi, pi] in f64,
/// so that long positions keep it exact to f32 (as the float64 oracle's);
/// cos and sin of the reduced angle are computed in f32 at the angle
/// rounded to f32, then corrected to first order for that rounding: within
/// a few f32 ulps of 1 (absolute) of the oracle's.
std::pair<Value, Value> emitRotaryCosSin(ImplicitLocOpBuilder &b, double theta,
                                         int64_t headDim, Value position, Value pair);

} // namespace mlir::cohere2c

#endif // COHERE2C_CONVERSION_ROTARYANGLE_H
