//===- BlockHash.cpp - Chained 128-bit hashes of full KV-cache blocks -----===//
//
// xxHash is used header-only, so the runtime needs no libxxhash at run time.
//
//===----------------------------------------------------------------------===//
#include "kv_cache/BlockHash.h"

#define XXH_INLINE_ALL
#include <xxhash.h>

namespace cohere2c::kv {

BlockHash hashBlock(const BlockHash &parent, const int32_t *tokens,
                    int64_t numTokens) {
  XXH3_state_t state;
  XXH3_INITSTATE(&state);
  XXH3_128bits_reset(&state);
  XXH3_128bits_update(&state, &parent.low, sizeof(parent.low));
  XXH3_128bits_update(&state, &parent.high, sizeof(parent.high));
  XXH3_128bits_update(&state, tokens,
                      static_cast<size_t>(numTokens) * sizeof(int32_t));
  XXH128_hash_t digest = XXH3_128bits_digest(&state);
  return BlockHash{digest.low64, digest.high64};
}

} // namespace cohere2c::kv
