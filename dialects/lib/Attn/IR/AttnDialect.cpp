//===- AttnDialect.cpp - attn dialect and attributes ----------------------===//

#include "cohere2c/Dialect/Attn/IR/Attn.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/DialectImplementation.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace mlir::cohere2c::attn;

#include "cohere2c/Dialect/Attn/IR/AttnDialect.cpp.inc"

#define GET_ATTRDEF_CLASSES
#include "cohere2c/Dialect/Attn/IR/AttnAttrs.cpp.inc"

void AttnDialect::initialize() {
  addOperations<
#define GET_OP_LIST
#include "cohere2c/Dialect/Attn/IR/AttnOps.cpp.inc"
      >();
  addAttributes<
#define GET_ATTRDEF_LIST
#include "cohere2c/Dialect/Attn/IR/AttnAttrs.cpp.inc"
      >();
}

LogicalResult
SlidingWindowAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                          int64_t size) {
  if (size < 1)
    return emitError() << "sliding window must be at least 1 token, found "
                       << size;
  return success();
}

LogicalResult RopeAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                               llvm::APFloat theta, bool interleaved) {
  if (!theta.isFiniteNonZero() || theta.isNegative())
    return emitError() << "rope theta must be positive and finite, found "
                       << theta.convertToDouble();
  // Both lowerings (AttnToHost, AttnToGPU's kv-append kernel) rotate
  // (x[2m], x[2m+1]); accepting the half-split pairing would miscompile.
  if (!interleaved)
    return emitError() << "rope must be interleaved: only interleaved pairing "
                          "(x[2m], x[2m+1]) is implemented, not the half-split "
                          "pairing (x[m], x[m + head_dim/2])";
  return success();
}

// #attn.rope<theta = 5.0e4, interleaved>
Attribute RopeAttr::parse(AsmParser &parser, Type) {
  double theta = 0;
  bool interleaved = false;
  if (parser.parseLess() || parser.parseKeyword("theta") ||
      parser.parseEqual() || parser.parseFloat(theta))
    return {};
  if (succeeded(parser.parseOptionalComma())) {
    if (parser.parseKeyword("interleaved"))
      return {};
    interleaved = true;
  }
  if (parser.parseGreater())
    return {};
  return parser.getChecked<RopeAttr>(parser.getContext(), llvm::APFloat(theta),
                                     interleaved);
}

void RopeAttr::print(AsmPrinter &printer) const {
  printer << "<theta = ";
  printer.printFloat(getTheta());
  if (getInterleaved())
    printer << ", interleaved";
  printer << ">";
}
