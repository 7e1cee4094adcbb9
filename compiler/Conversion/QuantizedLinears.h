//===- QuantizedLinears.h - FP8 weights need the quantization pass -------===//
#ifndef COHERE2C_CONVERSION_QUANTIZEDLINEARS_H
#define COHERE2C_CONVERSION_QUANTIZEDLINEARS_H

#include "mlir/IR/Operation.h"

namespace mlir::cohere2c {

/// Both lowerings compute an attn.linear in its input's type, so one whose
/// weight is FP8 (it carries weight_scale) must first become attn.fp8_linear
/// (attn-quantize-fp8-rowwise). Emits "has an fp8 weight: run
/// attn-quantize-fp8-rowwise first" on the first such op below `root` and
/// fails; succeeds where there is none.
LogicalResult requireQuantizedLinears(Operation *root);

} // namespace mlir::cohere2c

#endif // COHERE2C_CONVERSION_QUANTIZEDLINEARS_H
