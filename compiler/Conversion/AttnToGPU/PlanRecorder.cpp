//===- PlanRecorder.cpp ---------------------------------------------------===//

#include "Conversion/AttnToGPU/PlanRecorder.h"

namespace mlir::cohere2c::attn_to_gpu {

std::string PlanRecorder::allocate(int64_t width, Type dtype, StepParam rows) {
  std::string name = "b" + std::to_string(bufferWidths.size());
  bufferWidths[name] = width;
  // Declarations precede the steps, in the order they were made.
  OpBuilder pb = OpBuilder::atBlockBegin(&planStep.getBody().front());
  if (lastBuffer)
    pb.setInsertionPointAfter(lastBuffer);
  lastBuffer = plan::BufferOp::create(pb, at.getLoc(), pb.getStringAttr(name),
                                      pb.getI64IntegerAttr(width), TypeAttr::get(dtype),
                                      plan::ParamAttr::get(at.getContext(), rows));
  return name;
}

PlanArg PlanRecorder::bufferFor(Value v) {
  auto type = cast<RankedTensorType>(v.getType());
  return buffers[v] = PlanArg::buffer(allocate(widthOf(type), type.getElementType()));
}

Attribute PlanRecorder::argAttr(const PlanArg &a) {
  MLIRContext *context = at.getContext();
  switch (a.kind) {
  case PlanArg::Kind::Buffer:
    return plan::ViewAttr::get(context, FlatSymbolRefAttr::get(context, a.name), a.column,
                               a.width);
  case PlanArg::Kind::Weight:
    return plan::WeightAttr::get(context, at.getStringAttr(a.name), a.width);
  case PlanArg::Kind::Input:
    return plan::InputAttr::get(context, a.input,
                                isKVInput(a.input) ? std::optional(a.group)
                                                   : std::nullopt);
  case PlanArg::Kind::Param:
    return plan::ParamAttr::get(context, a.param);
  case PlanArg::Kind::Int:
    break;
  }
  return at.getI64IntegerAttr(a.value);
}

void PlanRecorder::kernelStep(const GeneratedKernel &kernel, StepParam gridX, int64_t gridY,
                              int64_t block, ArrayRef<PlanArg> args) {
  OpBuilder pb = planEnd();
  SmallVector<Attribute> attrs;
  for (const PlanArg &a : args)
    attrs.push_back(argAttr(a));
  auto ref = SymbolRefAttr::get(kernelModule.getNameAttr(),
                                {FlatSymbolRefAttr::get(at.getContext(), kernel.name)});
  plan::LaunchOp::create(pb, at.getLoc(), ref,
                         plan::KernelAttr::get(at.getContext(), kernel.spec),
                         plan::ParamAttr::get(at.getContext(), gridX),
                         pb.getI64IntegerAttr(gridY), pb.getI64IntegerAttr(block),
                         pb.getArrayAttr(attrs), UnitAttr());
}

void PlanRecorder::gemmStep(PlanArg a, PlanArg c, StringRef weight, StepParam m,
                            int64_t n, int64_t k, double alpha,
                            std::optional<std::pair<StringRef, PlanArg>> scales,
                            std::optional<PlanArg> addend) {
  OpBuilder pb = planEnd();
  SmallVector<Attribute> attrs = {argAttr(a), argAttr(c)};
  if (scales)
    attrs.push_back(argAttr(scales->second));
  if (addend)
    attrs.push_back(argAttr(*addend));
  plan::GemmOp::create(pb, at.getLoc(), pb.getStringAttr(weight),
                       scales ? pb.getStringAttr(scales->first) : StringAttr(),
                       plan::ParamAttr::get(at.getContext(), m),
                       pb.getI64IntegerAttr(n), pb.getI64IntegerAttr(k),
                       pb.getF64FloatAttr(alpha), pb.getArrayAttr(attrs),
                       UnitAttr(), addend ? pb.getUnitAttr() : UnitAttr());
}

} // namespace mlir::cohere2c::attn_to_gpu
