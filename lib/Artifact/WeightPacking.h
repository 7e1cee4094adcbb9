//===- WeightPacking.h - Checkpoint tensors -> the weights buffer ---------===//
//
// Used by the compiler (to write OUT.weights) and by the runtime (to bind a
// Hugging Face checkpoint at load time): the same conversion in both.
//
//===----------------------------------------------------------------------===//
#ifndef COHERE2C_ARTIFACT_WEIGHTPACKING_H
#define COHERE2C_ARTIFACT_WEIGHTPACKING_H

#include "Artifact/WeightLayout.h"
#include "Model/SafeTensors.h"
#include "Support/Status.h"

#include <functional>

namespace cohere2c {

/// Called after each tensor with (tensors done, tensors in all), one call at
/// a time.
using ProgressFn = std::function<void(size_t, size_t)>;

/// Rows [firstRow, endRow) (of the last dimension) of one entry of a layout
/// (not a scale entry), converted as packWeights does, into `rows` (the
/// entry's bytes from firstRow on) and, for an F8E4M3 entry, their scales
/// into `scales` (an f32 per row). Errors: packWeights's, for those rows.
/// Safe to call concurrently on one checkpoint.
Status packRows(const Checkpoint &checkpoint, const WeightEntry &entry,
                int64_t firstRow, int64_t endRow, char *rows, float *scales,
                const std::string &source);

/// Writes (on every core) every tensor of `layout` from `checkpoint` into `buffer` (at least
/// layout.totalBytes bytes), converted to the layout's dtype: to F32 exactly,
/// to BF16 with round-to-nearest-even, to F8E4M3 (with the "<name>_scale"
/// entry that follows it) by rowwise quantization (quantizeRowE4M3). An FP8
/// checkpoint (F8_E4M3 "*.weight" with per-output-channel "*.weight_scale",
/// [out] or [out, 1], as compressed-tensors "FP8 dynamic" exports write them)
/// is copied as is into an FP8 layout and dequantized (q * scale) into
/// others. Padding between tensors is zeroed. Errors: a missing tensor or a
/// shape other than the layout's (naming `source`, the tensor, both shapes);
/// an F8_E4M3 tensor without its scales; a NaN or infinity in a packed
/// tensor or its scales (naming the tensor and the element).
Status packWeights(const Checkpoint &checkpoint, const WeightLayout &layout,
                   void *buffer, const std::string &source,
                   const ProgressFn &progress = nullptr);

/// f32 -> bf16 bits, round to nearest even; NaN stays NaN.
uint16_t floatToBF16(float value);

/// f32 -> float8 e4m3fn bits (OCP FP8: bias 7, 3 mantissa bits, largest
/// finite 448, no infinities): round to nearest even, saturating to +-448 as
/// PTX's cvt.rn.satfinite does; NaN -> 0x7F with the sign.
uint8_t floatToE4M3(float value);

/// Quantizes `n` values to e4m3 with one scale, the weight recipe of
/// docs/ARCHITECTURE.md ("Precision") and of the float64 FP8 references
/// (test/data/models/README.md): scale =
/// max(amax, 1e-12) / 448, out[i] = e4m3(values[i] / scale), the quotient
/// computed in double. Returns scale (as f32).
float quantizeRowE4M3(const float *values, int64_t n, uint8_t *out);

} // namespace cohere2c

#endif // COHERE2C_ARTIFACT_WEIGHTPACKING_H
