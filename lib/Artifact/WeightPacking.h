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

/// Called after each tensor with (tensors done, tensors in all).
using ProgressFn = std::function<void(size_t, size_t)>;

/// Writes every tensor of `layout` from `checkpoint` into `buffer` (at least
/// layout.totalBytes bytes), converted to the layout's dtype: F32, BF16, F16
/// and F8_E4M3 sources to F32 exactly; to BF16 with round-to-nearest-even.
/// Padding between tensors is zeroed. Errors: a missing tensor or a shape
/// other than the layout's (naming `source`, the tensor, both shapes); a
/// layout dtype other than F32 or BF16.
Status packWeights(const Checkpoint &checkpoint, const WeightLayout &layout,
                   void *buffer, const std::string &source,
                   const ProgressFn &progress = nullptr);

/// f32 -> bf16 bits, round to nearest even; NaN stays NaN.
uint16_t floatToBF16(float value);

} // namespace cohere2c

#endif // COHERE2C_ARTIFACT_WEIGHTPACKING_H
