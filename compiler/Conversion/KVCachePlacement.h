//===- KVCachePlacement.h - Where an attention layer keeps its KV ---------===//
#ifndef COHERE2C_CONVERSION_KVCACHEPLACEMENT_H
#define COHERE2C_CONVERSION_KVCACHEPLACEMENT_H

#include "Artifact/Manifest.h"
#include "cohere2c/Dialect/Attn/IR/Attn.h"

#include "mlir/IR/ImplicitLocOpBuilder.h"

#include <vector>

namespace mlir::cohere2c {

/// Where a layer's KV lives (Manifest.h, KVGroup): its group, of equal-size
/// groups per window drawing blocks from one pool laid out
/// [blocks][layers of a group][K, V]...
struct KVCachePlacement {
  int64_t group = 0;         // the group's index, in kvGroupsOf's order
  int64_t slot = 0;          // the layer's rank among the group's layers
  int64_t layersInGroup = 0; // attention ops of the group in the module
};

/// The placement of `op` among the attention ops of its module (ranked by
/// kv_slot, the layer index).
KVCachePlacement kvCachePlacementOf(attn::AttentionOp op);

/// The element offset in the KV pool of the K (kv = 0) or V (kv = 1)
/// row of token slot `inBlock` of pool block `block`, for the group's layer
/// `layerSlot` of `groupLayers` layers; kvWidth = KV heads x head_dim. The pool
/// is laid out [blocks][layers of the group][K, V][block size][KV
/// heads][head_dim] (the runtime allocates blocks of that size,
/// runtime/src/kv_cache), so a block holds every layer of its group for the
/// same tokens. Index-typed values; both lowerings address the cache through
/// it.
Value kvPoolRowOffset(ImplicitLocOpBuilder &b, Value block, Value layerSlot, int64_t groupLayers,
                      Value blockSize, Value inBlock, int64_t kv, int64_t kvWidth);

/// The unit attribute of a module whose KV cache holds e4m3 values (KV
/// cache dtype fp8, Artifact/Precision.h): every K and V value is rounded
/// to float8 e4m3fn at scale 1, saturating at +-448, as it is stored.
inline constexpr const char *kE4M3KVCacheAttrName = "attn.e4m3_kv_cache";
inline bool hasE4M3KVCache(ModuleOp module) {
  return module->hasAttr(kE4M3KVCacheAttrName);
}

/// The KV groups of `module`'s attention ops, as the manifest records them
/// for the runtime: the layers of each window the kernels were specialized
/// on (0 for full attention) in groups of one size, by window (KVGroup's
/// order); each group's layers ranked by kv_slot (the order of
/// kvCachePlacementOf's slots).
std::vector<::cohere2c::KVGroup> kvGroupsOf(ModuleOp module);

} // namespace mlir::cohere2c

#endif // COHERE2C_CONVERSION_KVCACHEPLACEMENT_H
