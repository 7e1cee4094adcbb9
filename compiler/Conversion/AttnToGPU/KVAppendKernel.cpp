//===- KVAppendKernel.cpp - K and V into the paged cache, q rotated -------===//

#include "Conversion/AttnToGPU/KernelGenerator.h"

#include "Conversion/RotaryAngle.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"

#include <cmath>
#include <limits>

namespace mlir::cohere2c::attn_to_gpu {

// Writes K (rotated on RoPE layers) and V of each token into its block of
// the paged cache (layout: kvRowOffset). On RoPE layers it also writes the
// token's q rotated, rounded to e, into q_rotated [tokens, heads x hd]: a
// token's q and k share its position, and the attention kernels read q as
// it is (one rotation per token and head, not one per block or warp that
// reads it). On RoPE layers a block per token and a thread per pair index m
// of a head (kvAppendThreads): the angle of (position, m), f64 arithmetic,
// serves pair m of every q and k head of the token (computed once a head,
// it took most of the kernel's time). Otherwise a block per (token, chunk of
// K's feature pairs).
KernelGenerator::Kernel KernelGenerator::kvAppendKernel(
    Type e, attn::AttentionOp op, int64_t groupLayers, int64_t kStride,
    int64_t vStride, int64_t qStride, int64_t pairUnit) {
  auto rope = dyn_cast<attn::RopeAttr>(op.getPosition());
  int64_t heads = op.getNumHeads(), kvHeads = op.getNumKvHeads(),
          hd = op.getHeadDim();
  std::string name =
      sanitize("kv_append_" + std::string(rope ? "rope" : "no_rope") + "_h" +
               std::to_string(heads) + "_kv" + std::to_string(kvHeads) + "_d" +
               std::to_string(hd) + "_l" + std::to_string(groupLayers) +
               strideSuffix("k", kStride, kvHeads * hd) +
               strideSuffix("v", vStride, kvHeads * hd) +
               (rope ? strideSuffix("q", qStride, heads * hd) +
                           (pairUnit == 2 ? "" : "_unpaired")
                     : ""));
  KernelSpec spec{KernelFamily::KVAppend};
  spec.rope = (bool)rope;
  spec.strides = {kStride, vStride, rope ? qStride : 0};
  Type i32 = b.getI32Type(), i64 = b.getI64Type();
  // k, v, positions, seqs, tables, pool, slot, block_size, table_width[, q,
  // q_rotated]
  SmallVector<Type> args = {flat(e), flat(e), flat(i32), flat(i32), flat(i32),
                            flat(e), i64,     i64,       i64};
  if (rope)
    args.append({flat(e), flat(e)});
  if (!beginKernel(name, args, kvAppendThreads(rope != nullptr, hd), 0))
    return {name, spec};
  Value k = kernel.getArgument(0), v = kernel.getArgument(1);
  Value positions = kernel.getArgument(2), seqs = kernel.getArgument(3);
  int64_t kvWidth = kvHeads * hd;
  PagedPool paged = pagedPoolArgs(4, 5, groupLayers, kvWidth);
  Value pool = paged.pool;
  Value t = gpu::BlockIdOp::create(b, gpu::Dimension::x);
  Value p32 = memref::LoadOp::create(b, positions, ValueRange{t});
  Value p = toIndex(p32), s = toIndex(load(seqs, t));
  Value kBase = kvRowOffsetOf(paged, s, p, 0),
        vBase = kvRowOffsetOf(paged, s, p, 1);
  Value kRow = mul(t, index(kStride)), vRow = mul(t, index(vStride));
  // Pair i is (x[2m], x[2m+1]) of head i / (hd/2), m = i % (hd/2).
  if (!rope) {
    auto copy = [&](Value src, Value srcRow, Value dstBase, Value d) {
      memref::StoreOp::create(
          b, memref::LoadOp::create(b, src, ValueRange{add(srcRow, d)}), pool,
          ValueRange{add(dstBase, d)});
    };
    forChunkElement(kvWidth / 2, [&](Value i) {
      Value even = mul(i, index(2)), odd = add(even, index(1));
      for (Value d : {even, odd}) {
        copy(v, vRow, vBase, d);
        copy(k, kRow, kBase, d);
      }
    });
    endKernel();
    return {name, spec};
  }
  Value q = kernel.getArgument(9), qRotated = kernel.getArgument(10);
  double theta = rope.getTheta().convertToDouble();
  // Every pair the thread moves is loaded before the first store: the
  // stores may alias the loads as far as the compiler knows, so loads
  // emitted after them would wait for them, a memory round trip per head
  // (about 20 us a launch, whatever the number of tokens).
  Value qRow = mul(t, index(qStride)), qOutRow = mul(t, index(heads * hd));
  auto pairOf = [&](int64_t h) {
    return add(index(h * hd), mul(threadId, index(2)));
  };
  // The pool and q_rotated are dense rows of heads x hd: always aligned.
  auto loadPair = [&](Value mem, Value at) -> SmallVector<Value> {
    if (pairUnit == 2)
      return loadUnit(mem, at, 2);
    return {load(mem, at), load(mem, add(at, index(1)))};
  };
  SmallVector<SmallVector<Value>> qPairs, kPairs, vPairs;
  for (int64_t h = 0; h < heads; ++h) {
    qPairs.push_back(loadPair(q, add(qRow, pairOf(h))));
    if (h < kvHeads) {
      kPairs.push_back(loadPair(k, add(kRow, pairOf(h))));
      vPairs.push_back(loadPair(v, add(vRow, pairOf(h))));
    }
  }
  auto [c, sn] = emitRotaryCosSin(b, theta, hd, p32, threadId);
  auto rotated = [&](ArrayRef<Value> pair) {
    auto [r0, r1] = emitRotatePair(b, pair[0], pair[1], c, sn);
    return SmallVector<Value>{r0, r1};
  };
  for (int64_t h = 0; h < heads; ++h) {
    storeUnit(rotated(qPairs[h]), qRotated, add(qOutRow, pairOf(h)));
    if (h < kvHeads) {
      storeUnit(rotated(kPairs[h]), pool, add(kBase, pairOf(h)));
      storeUnit(vPairs[h], pool, add(vBase, pairOf(h)));
    }
  }
  endKernel();
  return {name, spec};
}

} // namespace mlir::cohere2c::attn_to_gpu
