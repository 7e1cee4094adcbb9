//===- KVCachePlacement.cpp -----------------------------------------------===//

#include "Conversion/KVCachePlacement.h"

#include "mlir/Dialect/Arith/IR/Arith.h"

using namespace mlir;

mlir::cohere2c::KVCachePlacement
mlir::cohere2c::kvCachePlacementOf(attn::AttentionOp op) {
  KVCachePlacement placement;
  placement.sliding = op.getSlidingWindow().has_value();
  op->getParentOfType<ModuleOp>().walk([&](attn::AttentionOp other) {
    if (other.getSlidingWindow().has_value() != placement.sliding)
      return;
    placement.slot += other.getKvSlot() < op.getKvSlot();
    ++placement.layersInGroup;
  });
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

FailureOr<std::vector<::cohere2c::KVGroup>> mlir::cohere2c::kvGroupsOf(ModuleOp module) {
  using ::cohere2c::kFullGroup;
  using ::cohere2c::kSlidingGroup;
  std::vector<::cohere2c::KVGroup> groups(::cohere2c::kNumKVGroups);
  groups[kFullGroup].name = "full";
  groups[kSlidingGroup].name = "sliding";
  WalkResult walk = module.walk([&](attn::AttentionOp op) {
    std::optional<int64_t> window = op.getSlidingWindow();
    ::cohere2c::KVGroup &group = groups[window ? kSlidingGroup : kFullGroup];
    if (window && !group.layers.empty() && group.window != *window) {
      op.emitOpError("has a sliding window of ")
          << *window << " where another layer's is " << group.window
          << ": the KV cache has one sliding group";
      return WalkResult::interrupt();
    }
    group.window = window.value_or(0);
    group.layers.push_back(op.getKvSlot());
    return WalkResult::advance();
  });
  if (walk.wasInterrupted())
    return failure();
  for (::cohere2c::KVGroup &group : groups)
    llvm::sort(group.layers);
  return groups;
}
