//===- KVCachePlacement.cpp -----------------------------------------------===//

#include "Conversion/KVCachePlacement.h"

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
