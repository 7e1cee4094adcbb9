//===- KVCachePlacement.cpp -----------------------------------------------===//

#include "Conversion/KVCachePlacement.h"

#include "mlir/Dialect/Arith/IR/Arith.h"

#include <map>

using namespace mlir;

namespace {

int64_t windowOf(mlir::cohere2c::attn::AttentionOp op) {
  return op.getSlidingWindow().value_or(0);
}

} // namespace

mlir::cohere2c::KVCachePlacement
mlir::cohere2c::kvCachePlacementOf(attn::AttentionOp op) {
  std::vector<::cohere2c::KVGroup> groups =
      kvGroupsOf(op->getParentOfType<ModuleOp>());
  for (size_t g = 0; g < groups.size(); ++g) {
    const std::vector<int64_t> &layers = groups[g].layers;
    auto slot = llvm::find(layers, op.getKvSlot());
    if (slot != layers.end())
      return {(int64_t)g, slot - layers.begin(), (int64_t)layers.size()};
  }
  llvm_unreachable("kvGroupsOf has a group for every layer");
}

Value mlir::cohere2c::kvPoolRowOffset(ImplicitLocOpBuilder &b, Value block,
                                      Value layerSlot, int64_t groupLayers,
                                      Value blockSize, Value inBlock,
                                      int64_t kv, int64_t kvWidth) {
  auto index = [&](int64_t v) { return arith::ConstantIndexOp::create(b, v); };
  auto add = [&](Value x, Value y) { return arith::AddIOp::create(b, x, y); };
  auto mul = [&](Value x, Value y) { return arith::MulIOp::create(b, x, y); };
  Value plane = add(
      mul(add(mul(block, index(groupLayers)), layerSlot), index(2)), index(kv));
  return mul(add(mul(plane, blockSize), inBlock), index(kvWidth));
}

std::vector<::cohere2c::KVGroup> mlir::cohere2c::kvGroupsOf(ModuleOp module) {
  std::map<int64_t, int64_t> windowOfLayer;
  module.walk([&](attn::AttentionOp op) {
    windowOfLayer[op.getKvSlot()] = windowOf(op);
  });
  return ::cohere2c::kvGroupsOfWindows(windowOfLayer);
}
