//===- LaunchPlanOf.cpp ---------------------------------------------------===//

#include "Target/CUDA/LaunchPlanOf.h"

#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using ::cohere2c::LaunchPlan;
using ::cohere2c::PlanArg;
using ::cohere2c::PlanStep;

namespace {

PlanArg argOf(Attribute attr) {
  PlanArg a;
  llvm::TypeSwitch<Attribute>(attr)
      .Case([&](mlir::cohere2c::plan::ViewAttr v) {
        a.kind = PlanArg::Kind::Buffer;
        a.name = v.getBuffer().getValue().str();
        a.column = v.getColumn();
        a.width = v.getWidth();
      })
      .Case([&](mlir::cohere2c::plan::WeightAttr w) {
        a.kind = PlanArg::Kind::Weight;
        a.name = w.getName().str();
        a.width = w.getElements();
      })
      .Case([&](mlir::cohere2c::plan::InputAttr i) {
        a.kind = PlanArg::Kind::Input;
        a.input = i.getInput();
        a.group = i.getGroup().value_or(0);
      })
      .Case([&](mlir::cohere2c::plan::ParamAttr p) {
        a.kind = PlanArg::Kind::Param;
        a.param = p.getParam();
      })
      .Case([&](IntegerAttr i) { a.value = i.getInt(); });
  return a;
}

std::vector<PlanArg> argsOf(ArrayAttr args) {
  std::vector<PlanArg> out;
  for (Attribute a : args)
    out.push_back(argOf(a));
  return out;
}

} // namespace

LaunchPlan mlir::cohere2c::launchPlanOf(plan::StepOp step) {
  LaunchPlan result;
  if (auto fills = step->getAttrOfType<DictionaryAttr>(plan::kWeightFillAttrName))
    for (::cohere2c::DType dtype :
         {::cohere2c::DType::F32, ::cohere2c::DType::BF16, ::cohere2c::DType::F8E4M3})
      if (auto kernel = fills.getAs<FlatSymbolRefAttr>(::cohere2c::dtypeName(dtype)))
        result.weightFills[dtype] = kernel.getValue().str();
  for (Operation &op : step.getBody().front()) {
    PlanStep s;
    if (auto buffer = dyn_cast<plan::BufferOp>(op)) {
      result.buffers.push_back({buffer.getSymName().str(), (int64_t)buffer.getWidth(),
                                plan::dtypeOf(buffer.getDtype()), buffer.getRows().getParam()});
      continue;
    }
    if (auto launch = dyn_cast<plan::LaunchOp>(op)) {
      s.side = launch.getSide();
      s.kernel = launch.getKernel().getLeafReference().str();
      s.spec = launch.getSpec().getSpec();
      s.gridX = launch.getGridX().getParam();
      s.gridY = launch.getGridY();
      s.blockX = launch.getBlockX();
      s.args = argsOf(launch.getArgs());
    } else if (auto gemm = dyn_cast<plan::GemmOp>(op)) {
      s.kind = PlanStep::Kind::Gemm;
      s.side = gemm.getSide();
      s.weight = gemm.getWeight().str();
      s.weightScale = gemm.getWeightScale().value_or("").str();
      s.m = gemm.getM().getParam();
      s.n = gemm.getN();
      s.k = gemm.getK();
      s.alpha = gemm.getAlpha().convertToDouble();
      s.plus = gemm.getPlus();
      s.args = argsOf(gemm.getArgs());
    } else {
      s.kind = isa<plan::ForkOp>(op) ? PlanStep::Kind::Fork : PlanStep::Kind::Join;
    }
    result.steps.push_back(std::move(s));
  }
  return result;
}
