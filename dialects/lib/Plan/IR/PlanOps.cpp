//===- PlanOps.cpp - plan dialect verifiers -------------------------------===//

#include "cohere2c/Dialect/Plan/IR/Plan.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/OpImplementation.h"

using namespace mlir;
using namespace mlir::cohere2c::plan;

#define GET_OP_CLASSES
#include "cohere2c/Dialect/Plan/IR/PlanOps.cpp.inc"

namespace {

/// That every argument is a view, a weight, an input, a parameter or an i64.
LogicalResult verifyArgs(Operation *op, ArrayAttr args) {
  for (Attribute a : args) {
    auto i = dyn_cast<IntegerAttr>(a);
    if (isa<ViewAttr, WeightAttr, InputAttr, ParamAttr>(a) || (i && i.getType().isInteger(64)))
      continue;
    return op->emitOpError("argument ") << a << " is not a view, weight, input, parameter or i64";
  }
  return success();
}

} // namespace

LogicalResult LaunchOp::verify() { return verifyArgs(*this, getArgs()); }

LogicalResult GemmOp::verify() {
  if (getArgs().size() != (getWeightScale() ? 3u : 2u) + (getPlus() ? 1u : 0u))
    return emitOpError("takes [a, c] or, with weight_scale, [a, c, a's "
                       "scales], then the "
                       "addend with plus; found ")
           << getArgs().size() << " arguments";
  for (Attribute a : getArgs()) {
    auto input = dyn_cast<InputAttr>(a);
    if (!isa<ViewAttr>(a) && !(input && input.getInput() == ::cohere2c::PlanInput::Logits))
      return emitOpError("operand ") << a << " is neither a buffer view nor the logits";
  }
  return success();
}

/// The arguments a launch's kernel compiled a row stride for are views of
/// buffers of that width.
static LogicalResult verifyRowStrides(StepOp step, LaunchOp launch) {
  const ::cohere2c::KernelSpec &spec = launch.getSpec().getSpec();
  std::vector<int> rows = ::cohere2c::rowStrideArguments(spec);
  for (size_t i = 0; i < rows.size(); ++i) {
    auto view = rows[i] < (int)launch.getArgs().size()
                    ? dyn_cast<ViewAttr>(launch.getArgs()[rows[i]])
                    : ViewAttr();
    BufferOp buffer = view ? step.lookupSymbol<BufferOp>(view.getBuffer()) : BufferOp();
    if (!buffer)
      return launch.emitOpError("argument ") << rows[i] << " must be a buffer view (a "
                                             << ::cohere2c::kernelFamilyName(spec.family)
                                             << " kernel reads rows of it)";
    if ((int64_t)buffer.getWidth() != spec.strides[i])
      return launch.emitOpError("argument ")
             << rows[i] << " is a view of " << view.getBuffer() << " of width "
             << buffer.getWidth() << "; the kernel was compiled for a row stride of "
             << spec.strides[i];
  }
  return success();
}

LogicalResult StepOp::verify() {
  // Views name buffers of the step and lie inside them; forks and joins
  // alternate, from a fork to a join, with the side steps between them.
  bool forked = false;
  for (Operation &op : getBody().front()) {
    if (isa<ForkOp, JoinOp>(op)) {
      bool fork = isa<ForkOp>(op);
      if (forked == fork)
        return op.emitOpError(fork ? "before the join of the previous fork" : "without a fork");
      forked = fork;
      continue;
    }
    if (op.hasAttr("side") && !forked)
      return op.emitOpError("on the side stream outside a fork and its join");
    auto args = op.getAttrOfType<ArrayAttr>("args");
    if (!args)
      continue;
    for (Attribute a : args) {
      auto view = dyn_cast<ViewAttr>(a);
      if (!view)
        continue;
      auto buffer = lookupSymbol<BufferOp>(view.getBuffer());
      if (!buffer)
        return op.emitOpError("names no buffer of the step: ") << view.getBuffer();
      if (view.getColumn() < 0 || view.getWidth() < 0 ||
          view.getColumn() + view.getWidth() > buffer.getWidth())
        return op.emitOpError("view ") << view << " outside buffer " << view.getBuffer()
                                       << " of width " << buffer.getWidth();
    }
    if (auto launch = dyn_cast<LaunchOp>(op); launch && failed(verifyRowStrides(*this, launch)))
      return failure();
  }
  if (forked)
    return emitOpError("a fork without a join");
  return success();
}
