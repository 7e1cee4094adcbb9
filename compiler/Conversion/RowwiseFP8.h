//===- RowwiseFP8.h - The FP8 rowwise recipe, shared by lowerings --------===//
#ifndef COHERE2C_CONVERSION_ROWWISEFP8_H
#define COHERE2C_CONVERSION_ROWWISEFP8_H

#include "mlir/IR/ImplicitLocOpBuilder.h"

namespace mlir::cohere2c {

/// The per-token scale of an activation row, in f64, and its reciprocal r
/// as the f32 pair hi + lo (hi = r rounded to f32, lo = r - hi rounded to
/// f32: hi + lo is within about 2^-48 (relative) of r).
struct RowwiseScale {
  Value scale, reciprocalHi, reciprocalLo;
};

/// The scale of a row whose largest magnitude is `amax` (f32):
/// max(amax / 448, 1 / (448 * 512)). 448 is e4m3fn's largest finite value
/// (OCP 8-bit floating point); the floor makes an all-zero row quantize to
/// zeros, not NaN (docs/ARCHITECTURE.md, Precision). Stored rounded to f32.
RowwiseScale emitRowwiseScale(ImplicitLocOpBuilder &b, Value amax);

/// x / scale (x f32) rounded to f32, the value the e4m3 rounding then takes:
/// x (hi + lo) in f32 arithmetic, with x hi's rounding error recovered by an
/// fma (Dekker's product), x lo added to it and the sum rounded once:
/// multiplications instead of a division (divisions took most of a one-token
/// quantization kernel's time on the GPU), and no f64 (whose conversions to
/// and from f32 issue at a fraction of the f32 rate on Hopper). The sum is
/// within about 2^-47 (relative) of the f64 quotient the float64 reference
/// forms, far inside the f32 rounding that follows: an exact halfway case
/// between two e4m3 numbers is an f32 value, still reached exactly, and
/// rounds to even as there; the result can differ only for a quotient
/// within about 2^-47 of an f32 midpoint next to an e4m3 tie.
Value emitScaledQuotient(ImplicitLocOpBuilder &b, Value x,
                         const RowwiseScale &s);

} // namespace mlir::cohere2c

#endif // COHERE2C_CONVERSION_ROWWISEFP8_H
