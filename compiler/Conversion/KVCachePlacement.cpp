//===- KVCachePlacement.cpp -----------------------------------------------===//

#include "Conversion/KVCachePlacement.h"

#include "mlir/Dialect/Arith/IR/Arith.h"

#include <map>
#include <set>

using namespace mlir;

namespace {

int64_t windowOf(mlir::cohere2c::attn::AttentionOp op) { return op.getSlidingWindow().value_or(0); }

} // namespace

mlir::cohere2c::KVCachePlacement
mlir::cohere2c::kvCachePlacementOf(attn::AttentionOp op) {
  KVCachePlacement placement;
  int64_t window = windowOf(op);
  std::set<int64_t> windows;
  op->getParentOfType<ModuleOp>().walk([&](attn::AttentionOp other) {
    windows.insert(windowOf(other));
    if (windowOf(other) != window)
      return;
    placement.slot += other.getKvSlot() < op.getKvSlot();
    ++placement.layersInGroup;
  });
  placement.group = std::distance(windows.begin(), windows.find(window));
  return placement;
}

Value mlir::cohere2c::kvPoolRowOffset(ImplicitLocOpBuilder &b, Value block, Value layerSlot,
                                      int64_t groupLayers, Value blockSize, Value inBlock,
                                      int64_t kv, int64_t kvWidth) {
  auto index = [&](int64_t v) { return arith::ConstantIndexOp::create(b, v); };
  auto add = [&](Value x, Value y) { return arith::AddIOp::create(b, x, y); };
  auto mul = [&](Value x, Value y) { return arith::MulIOp::create(b, x, y); };
  Value plane = add(mul(add(mul(block, index(groupLayers)), layerSlot), index(2)), index(kv));
  return mul(add(mul(plane, blockSize), inBlock), index(kvWidth));
}

std::vector<::cohere2c::KVGroup> mlir::cohere2c::kvGroupsOf(ModuleOp module) {
  std::map<int64_t, std::vector<int64_t>> slotsOf;
  module.walk([&](attn::AttentionOp op) { slotsOf[windowOf(op)].push_back(op.getKvSlot()); });
  std::vector<::cohere2c::KVGroup> groups;
  for (auto &[window, slots] : slotsOf) {
    llvm::sort(slots);
    groups.push_back({window, std::move(slots)});
  }
  return groups;
}
