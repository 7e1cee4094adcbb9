//===- KVCachePlacement.h - Where an attention layer keeps its KV ---------===//
#ifndef COHERE2C_CONVERSION_KVCACHEPLACEMENT_H
#define COHERE2C_CONVERSION_KVCACHEPLACEMENT_H

#include "Artifact/Manifest.h"
#include "cohere2c/Dialect/Attn/IR/Attn.h"

#include <vector>

namespace mlir::cohere2c {

/// Layers that share a window share a KV group (Manifest.h): a sliding and a
/// full group, each pool laid out [blocks][layers of the group][K, V]...
struct KVCachePlacement {
  bool sliding = false;      // the sliding group, else the full one
  int64_t slot = 0;          // the layer's rank among the group's layers
  int64_t layersInGroup = 0; // attention ops of the group in the module
};

/// The placement of `op` among the attention ops of its module (ranked by
/// kv_slot, the layer index).
KVCachePlacement kvCachePlacementOf(attn::AttentionOp op);

/// The KV groups of `module`'s attention ops, as the manifest records them
/// for the runtime: the full group, then the sliding group with the window
/// its layers' kernels were specialized on; each group's layers ranked by
/// kv_slot (the order of kvCachePlacementOf's slots). Errors, emitted on the
/// op: sliding layers of different windows (the step has one sliding
/// group).
FailureOr<std::vector<::cohere2c::KVGroup>> kvGroupsOf(ModuleOp module);

} // namespace mlir::cohere2c

#endif // COHERE2C_CONVERSION_KVCACHEPLACEMENT_H
