//===- AttentionKernels.cpp - KV append, decode and prefill attention -------===//

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
  int64_t heads = op.getNumHeads(), kvHeads = op.getNumKvHeads(), hd = op.getHeadDim();
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
  Value kBase = kvRowOffsetOf(paged, s, p, 0), vBase = kvRowOffsetOf(paged, s, p, 1);
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

Value KernelGenerator::tokenOfRow(bool generatedOnly, Value row) {
  if (!generatedOnly)
    return row;
  // The last argument (workgroup memory comes after the arguments).
  Value rows = kernel.getArgument(kernel.getFunctionType().getNumInputs() - 1);
  return toIndex(memref::LoadOp::create(b, rows, ValueRange{row}));
}

std::string KernelGenerator::splitAttentionName(attn::AttentionOp op, int64_t groupLayers,
                                                int64_t qStride) {
  std::optional<int64_t> window = op.getSlidingWindow();
  int64_t heads = op.getNumHeads(), hd = op.getHeadDim();
  return "attention_" + (window ? "sliding" + std::to_string(*window) : std::string("full")) +
         "_h" + std::to_string(heads) + "_kv" + std::to_string(op.getNumKvHeads()) + "_d" +
         std::to_string(hd) + "_l" + std::to_string(groupLayers) +
         strideSuffix("q", qStride, heads * hd);
}

KernelGenerator::SplitAttentionBlock KernelGenerator::splitAttentionBlock(bool generatedOnly) {
  SplitAttentionBlock s;
  s.q = kernel.getArgument(0);
  s.positions = kernel.getArgument(1);
  s.seqs = kernel.getArgument(2);
  s.out = kernel.getArgument(5);
  s.splits = toIndex(kernel.getArgument(9));
  s.partial = kernel.getArgument(10);
  Value x = gpu::BlockIdOp::create(b, gpu::Dimension::x);
  s.row = arith::DivUIOp::create(b, x, s.splits);
  s.split = arith::RemUIOp::create(b, x, s.splits);
  s.token = tokenOfRow(generatedOnly, s.row);
  s.kvh = gpu::BlockIdOp::create(b, gpu::Dimension::y);
  s.warp = divu(threadId, kWarp);
  s.lane = remu(threadId, kWarp);
  return s;
}

// Attention as in flash-decoding (Dao et al., 2023): the keys a token sees
// (j <= p, and p - W < j on sliding layers; only blocks in that range are
// read) are split into `splits` contiguous ranges (an argument, chosen per
// step: splitsFor), one block per (token, split) along x and KV head along
// y, so that a decode step of one sequence still fills the GPU. The block
// computes every query head of its KV head's group (grouped-query
// attention, Ainslie et al., 2023): each K and V row is read once for the
// group's heads instead of once per head, which at large batch is what the
// kernel's time is (the rows are read from memory, not from cache). A
// block's warps split its range again, each lane owning head_dim / 32
// consecutive features of each head's q (rotated by kvAppendKernel on RoPE
// layers); each warp runs an online softmax per head (Milakov and
// Gimelshein, 2018) over its keys, the block merges its warps in shared
// memory and, with one split, stores O / l in out; with several, it writes
// its partial result (max m, sum l, and the unnormalized output
// acc[head_dim], f32) for attentionMergeKernel. A range with no keys writes
// m = -inf, l = 0, acc = 0.
KernelGenerator::Kernel KernelGenerator::attentionKernel(Type e, attn::AttentionOp op,
                                                        int64_t groupLayers, int64_t qStride) {
  std::optional<int64_t> window = op.getSlidingWindow();
  int64_t heads = op.getNumHeads(), kvHeads = op.getNumKvHeads(), hd = op.getHeadDim();
  int64_t group = heads / kvHeads, perLane = hd / kKeyLanes;
  std::string name = sanitize(splitAttentionName(op, groupLayers, qStride));
  KernelSpec spec{KernelFamily::Attention};
  spec.rows = KernelRows::All;
  spec.window = window.value_or(0);
  spec.strides = {qStride, 0, 0};
  Type i32 = b.getI32Type(), i64 = b.getI64Type();
  int64_t chunk = std::min<int64_t>(perLane, 16 / (e.getIntOrFloatBitWidth() / 8));
  // q and pool as vectors of chunk elements; q, positions, seqs, tables, pool, out,
  // slot, block_size, table_width, splits, partial (f32): prefillAttentionKernel's order
  Type chunks = flat(VectorType::get({chunk}, e));
  SmallVector<Type> args = {chunks, flat(i32), flat(i32), flat(i32), chunks, flat(e),
                            i64,    i64,       i64,       i64,       flat(b.getF32Type())};
  AttentionScratch scratchLayout{group, hd};
  if (!beginKernel(name, args, kAttentionWarps * kWarp, scratchLayout.floats()))
    return {name, spec};
  // Registers for kAttentionBlocksPerSM blocks: the kernel waits on memory,
  // and resident warps are what hides it.
  kernel->setAttr(NVVM::NVVMDialect::getMinctasmAttrName(),
                  b.getI32IntegerAttr(kAttentionBlocksPerSM));
  PagedKeys keys;
  keys.paged = pagedPoolArgs(3, 4, groupLayers, kvHeads * hd);
  keys.chunk = chunk;
  SplitAttentionBlock blk = splitAttentionBlock(false);
  Value t = blk.token, kvh = blk.kvh, warp = blk.warp;
  // A warp computes kWarp / kKeyLanes keys at once, kKeyLanes lanes each:
  // lane = keySub * kKeyLanes + keyLane holds features keyLane * perLane...
  Value keySub = divu(blk.lane, kKeyLanes), keyLane = remu(blk.lane, kKeyLanes);
  Value p = toIndex(load(blk.positions, t));
  keys.seq = toIndex(load(blk.seqs, t));
  std::tie(keys.lo, keys.hi) = attentionWarpKeys(window, p, blk.splits, blk.split, warp);

  // q of the group's heads, scaled by log2(e) / sqrt(hd): [group][perLane].
  // The kernel's softmax runs in base 2 (2^(x log2 e) = e^x; ex2.approx is
  // one instruction where expf is several, as in FlashAttention-2), its
  // maxima in those units until they are written for the merge kernel.
  Value firstHead = mul(kvh, index(group));
  Value qBase =
      add(mul(t, index(qStride)), add(mul(firstHead, index(hd)), mul(keyLane, index(perLane))));
  Value scale = f32(M_LOG2E / std::sqrt((double)hd));
  SmallVector<Value> qv;
  for (int64_t g = 0; g < group; ++g)
    for (Value v : loadChunks(blk.q, add(qBase, index(g * hd)), perLane, chunk))
      qv.push_back(mulf(v, scale));
  keys.headOffset = add(mul(kvh, index(hd)), mul(keyLane, index(perLane)));
  // Per head: m, l, acc[perLane].
  SmallVector<Value> init;
  for (int64_t g = 0; g < group; ++g) {
    init.append({f32(-std::numeric_limits<float>::infinity()), f32(0)});
    init.append(perLane, f32(0));
  }
  // kKeysInFlight keys per lane group and iteration: their table entries, K
  // and V rows are loaded independently, so a warp waits one memory latency
  // per group of keys, not per key. Keys past hi are read at hi - 1 and
  // weigh nothing. The loop carries the softmax state, then the cursors.
  int64_t loopStep = kKeysInFlight * kKeySubgroups;
  std::tie(keys.stepBlocks, keys.stepSlots) = cursorOf(index(loopStep), keys.paged.blockSize);
  std::tie(keys.lastBlock, keys.lastSlot) =
      cursorOf(arith::SubIOp::create(b, keys.hi, index(1)), keys.paged.blockSize);
  size_t softmaxValues = init.size();
  init.append(keyCursors(keys, keySub));
  auto loop = scf::ForOp::create(b, keys.lo, keys.hi, index(loopStep), init);
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToEnd(loop.getBody());
    ValueRange carried = loop.getRegionIterArgs();
    SmallVector<Value> next =
        attentionKeyGroup(keys, qv, group, loop.getInductionVar(), keySub,
                          carried.take_front(softmaxValues), carried.drop_front(softmaxValues));
    next.append(advanceKeyCursors(keys, carried.drop_front(softmaxValues)));
    scf::YieldOp::create(b, next);
  }
  // Merge the warp's lane groups, publish the warp's results, then merge
  // the block's warps.
  SmallVector<Value> merged =
      attentionMergeKeySubgroups(loop.getResults().take_front(softmaxValues), group);
  attentionPublishWarp(scratchLayout, merged, warp, keyLane, keySub);
  attentionMergeWarps(scratchLayout, AttentionOutput{blk.out, blk.partial, t, blk.row, blk.split,
                                                      blk.splits, firstHead, heads, hd});
  endKernel();
  return {name, spec};
}

void KernelGenerator::storeAttentionResult(const AttentionOutput &o, Value g, Value d, Value m,
                                           Value l, Value acc) {
  Value h = add(o.firstHead, g);
  auto ifElse = scf::IfOp::create(b, cmp(arith::CmpIPredicate::eq, o.splits, index(1)),
                                  /*withElseRegion=*/true);
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(&ifElse.getThenRegion().front());
  store(arith::DivFOp::create(b, acc, l), o.out,
        add(mul(o.token, index(o.heads * o.hd)), add(mul(h, index(o.hd)), d)));
  b.setInsertionPointToStart(&ifElse.getElseRegion().front());
  Value base = mul(add(mul(add(mul(o.row, index(o.heads)), h), o.splits), o.split),
                   index(o.hd + 2));
  memref::StoreOp::create(b, acc, o.partial, ValueRange{add(base, add(d, index(2)))});
  ifThen(cmp(arith::CmpIPredicate::eq, d, index(0)), [&] {
    memref::StoreOp::create(b, mulf(m, f32(M_LN2)), o.partial, ValueRange{base});
    memref::StoreOp::create(b, l, o.partial, ValueRange{add(base, index(1))});
  });
}

std::pair<Value, Value> KernelGenerator::splitKeys(std::optional<int64_t> window, Value p,
                                                   Value splits, Value split) {
  Value first = index(0);
  if (window)
    first = arith::MaxSIOp::create(b, index(0), add(p, index(1 - *window)));
  Value end = add(p, index(1));
  Value share = arith::CeilDivUIOp::create(b, arith::SubIOp::create(b, end, first), splits);
  Value lo = arith::MinUIOp::create(b, add(first, mul(split, share)), end);
  return {lo, arith::MinUIOp::create(b, add(lo, share), end)};
}

std::pair<Value, Value> KernelGenerator::attentionWarpKeys(std::optional<int64_t> window,
                                                           Value p, Value splits, Value split,
                                                           Value warp) {
  auto [blockLo, blockHi] = splitKeys(window, p, splits, split);
  Value share = arith::CeilDivUIOp::create(b, arith::SubIOp::create(b, blockHi, blockLo),
                                           index(kAttentionWarps));
  Value lo = arith::MinUIOp::create(b, add(blockLo, mul(warp, share)), blockHi);
  Value hi = arith::MinUIOp::create(b, add(lo, share), blockHi);
  return {lo, hi};
}

// An online softmax whose maximum m is still -inf (no valid key seen)
// measures from 0, so that exp(-inf - from) weighs 0, not NaN.
Value KernelGenerator::softmaxFrom(Value m) {
  Value minusInf = f32(-std::numeric_limits<float>::infinity());
  Value none = arith::CmpFOp::create(b, arith::CmpFPredicate::OEQ, m, minusInf);
  return arith::SelectOp::create(b, none, f32(0), m);
}

SmallVector<Value> KernelGenerator::keyCursors(const PagedKeys &keys, Value keySub) {
  SmallVector<Value> cursors;
  for (int64_t u = 0; u < kKeysInFlight; ++u) {
    Value j = add(add(keys.lo, index(u * kKeySubgroups)), keySub);
    auto [tableIndex, slot] = cursorOf(j, keys.paged.blockSize);
    cursors.append({tableIndex, slot});
  }
  return cursors;
}

SmallVector<Value> KernelGenerator::advanceKeyCursors(const PagedKeys &keys, ValueRange cursors) {
  SmallVector<Value> next;
  for (size_t c = 0; c < cursors.size(); c += 2) {
    auto [block, slot] = addToCursor(cursors[c], cursors[c + 1], keys.stepBlocks, keys.stepSlots,
                                     keys.paged.blockSize);
    next.append({block, slot});
  }
  return next;
}

std::pair<Value, Value> KernelGenerator::cursorOf(Value j, Value blockSize) {
  return {arith::DivUIOp::create(b, j, blockSize), arith::RemUIOp::create(b, j, blockSize)};
}

std::pair<Value, Value> KernelGenerator::addToCursor(Value tableIndex, Value slot, Value blocks,
                                                     Value slots, Value blockSize) {
  // slots < block size and slot < block size: at most one carry.
  Value sum = add(slot, slots);
  Value carry = cmp(arith::CmpIPredicate::uge, sum, blockSize);
  return {add(add(tableIndex, blocks), arith::SelectOp::create(b, carry, index(1), index(0))),
          arith::SelectOp::create(b, carry, arith::SubIOp::create(b, sum, blockSize), sum)};
}

SmallVector<Value> KernelGenerator::attentionKeyGroup(const PagedKeys &keys, ArrayRef<Value> qv,
                                                      int64_t group, Value j0, Value keySub,
                                                      ValueRange state, ValueRange cursors) {
  int64_t perLane = qv.size() / group, stride = 2 + perLane;
  // dots[u * group + g]: this lane group's key u against head g's q.
  SmallVector<Value> dots, valid;
  SmallVector<SmallVector<Value>> values;
  for (int64_t u = 0; u < kKeysInFlight; ++u) {
    Value ju = add(add(j0, index(u * kKeySubgroups)), keySub);
    valid.push_back(arith::CmpIOp::create(b, arith::CmpIPredicate::ult, ju, keys.hi));
    Value tableIndex = arith::SelectOp::create(b, valid[u], cursors[2 * u], keys.lastBlock);
    Value inBlock = arith::SelectOp::create(b, valid[u], cursors[2 * u + 1], keys.lastSlot);
    Value block = tableBlock(keys.paged, keys.seq, tableIndex);
    Value kBase = add(kvRowOffset(keys.paged, block, inBlock, 0), keys.headOffset);
    Value vBase = add(kvRowOffset(keys.paged, block, inBlock, 1), keys.headOffset);
    SmallVector<Value> k = loadChunks(keys.paged.pool, kBase, perLane, keys.chunk);
    for (int64_t g = 0; g < group; ++g) {
      Value dot = f32(0);
      for (int64_t i = 0; i < perLane; ++i)
        dot = fma(qv[g * perLane + i], k[i], dot);
      dots.push_back(dot);
    }
    values.push_back(loadChunks(keys.paged.pool, vBase, perLane, keys.chunk));
  }
  // Offsets below kKeyLanes stay within the lane group.
  for (int32_t offset = kKeyLanes / 2; offset > 0; offset /= 2)
    for (Value &dot : dots)
      dot = addf(dot, xorShuffle(dot, offset));
  Value minusInf = f32(-std::numeric_limits<float>::infinity());
  SmallVector<Value> next;
  for (int64_t g = 0; g < group; ++g) {
    ValueRange s = state.slice(g * stride, stride);
    Value mNew = s[0];
    for (int64_t u = 0; u < kKeysInFlight; ++u) {
      Value &dot = dots[u * group + g];
      dot = arith::SelectOp::create(b, valid[u], dot, minusInf);
      mNew = arith::MaximumFOp::create(b, mNew, dot);
    }
    // A lane group may have no valid key yet (its first is past hi).
    Value from = softmaxFrom(mNew);
    Value correction = math::Exp2Op::create(b, subf(s[0], from));
    size_t at = next.size();
    next.append({mNew, mulf(s[1], correction)});
    for (int64_t i = 0; i < perLane; ++i)
      next.push_back(mulf(s[2 + i], correction));
    for (int64_t u = 0; u < kKeysInFlight; ++u) {
      Value weight = math::Exp2Op::create(b, subf(dots[u * group + g], from));
      next[at + 1] = addf(next[at + 1], weight);
      for (int64_t i = 0; i < perLane; ++i)
        next[at + 2 + i] = fma(weight, values[u][i], next[at + 2 + i]);
    }
  }
  return next;
}

// Butterfly over the lane groups: after it every group holds the warp's
// (m, l, acc) per head, combined as the online softmax combines two ranges.
SmallVector<Value> KernelGenerator::attentionMergeKeySubgroups(ValueRange state, int64_t group) {
  SmallVector<Value> merged(state.begin(), state.end());
  int64_t stride = merged.size() / group;
  for (int32_t offset = kKeyLanes; offset < kWarp; offset *= 2)
    for (int64_t g = 0; g < group; ++g) {
      MutableArrayRef<Value> s(merged.data() + g * stride, stride);
      SmallVector<Value> other;
      for (Value v : s)
        other.push_back(xorShuffle(v, offset));
      Value m = arith::MaximumFOp::create(b, s[0], other[0]);
      Value from = softmaxFrom(m);
      Value mine = math::Exp2Op::create(b, subf(s[0], from)),
            theirs = math::Exp2Op::create(b, subf(other[0], from));
      s[0] = m;
      for (int64_t i = 1; i < stride; ++i)
        s[i] = fma(s[i], mine, mulf(other[i], theirs));
    }
  return merged;
}

void KernelGenerator::attentionPublishWarp(const AttentionScratch &layout, ValueRange state,
                                           Value warp, Value keyLane, Value keySub) {
  int64_t perLane = layout.hd / kKeyLanes, stride = 2 + perLane;
  Value firstGroup = arith::CmpIOp::create(b, arith::CmpIPredicate::eq, keySub, index(0));
  Value laneZero = andi(firstGroup,
                        arith::CmpIOp::create(b, arith::CmpIPredicate::eq, keyLane, index(0)));
  for (int64_t g = 0; g < layout.group; ++g) {
    ValueRange s = state.slice(g * stride, stride);
    Value slot = add(mul(warp, index(layout.group)), index(g));
    ifThen(laneZero, [&] {
      memref::StoreOp::create(b, s[0], scratch, ValueRange{slot});
      memref::StoreOp::create(b, s[1], scratch, ValueRange{layout.sumAt(*this, slot)});
    });
    Value accBase = add(layout.accAt(*this, slot), mul(keyLane, index(perLane)));
    ifThen(firstGroup, [&] {
      for (int64_t i = 0; i < perLane; ++i)
        memref::StoreOp::create(b, s[2 + i], scratch, ValueRange{add(accBase, index(i))});
    });
  }
  gpu::BarrierOp::create(b);
}

void KernelGenerator::attentionMergeWarps(const AttentionScratch &layout,
                                          const AttentionOutput &output) {
  // Merge: a thread per (head g of the group, feature d) combines that
  // feature over the warps. A warp with no keys has max -inf and sum 0 and
  // contributes nothing; so does the whole block when its range is empty
  // (m = -inf, measured from 0).
  Value minusInf = f32(-std::numeric_limits<float>::infinity());
  forThreads(layout.group * layout.hd, [&](Value gd) {
    Value g = divu(gd, layout.hd), d = remu(gd, layout.hd);
    auto slotOf = [&](int64_t w) { return add(index(w * layout.group), g); };
    auto read = [&](Value at) { return memref::LoadOp::create(b, scratch, ValueRange{at}); };
    Value m = minusInf;
    for (int64_t w = 0; w < kAttentionWarps; ++w)
      m = arith::MaximumFOp::create(b, m, read(slotOf(w)));
    Value from = softmaxFrom(m);
    Value l = f32(0), acc = f32(0);
    for (int64_t w = 0; w < kAttentionWarps; ++w) {
      Value c = math::Exp2Op::create(b, subf(read(slotOf(w)), from));
      l = fma(read(layout.sumAt(*this, slotOf(w))), c, l);
      acc = fma(read(add(layout.accAt(*this, slotOf(w)), d)), c, acc);
    }
    storeAttentionResult(output, g, d, m, l, acc);
  });
}

// Combines a token's partial results per head (written by attentionKernel,
// or by prefillAttentionKernel when it splits the keys):
// out = sum_z acc_z e^(m_z - m) / sum_z l_z e^(m_z - m), m = max_z m_z
// (finite: the token sees at least itself, so some range is not empty).
// Partials of block row i at [(i heads + h) splits + z] (hd + 2).
// A block per (row, head), a thread per feature.
KernelGenerator::Kernel KernelGenerator::attentionMergeKernel(Type e, int64_t heads, int64_t hd,
                                                  KernelRows rows) {
  std::string name = sanitize(
      rows == KernelRows::Prompt
          ? "attention_merge_prompt_h" + std::to_string(heads) + "_d" + std::to_string(hd)
          : "attention_merge_h" + std::to_string(heads) + "_d" + std::to_string(hd) +
                (rows == KernelRows::Generated ? "_generated" : ""));
  KernelSpec spec{KernelFamily::AttentionMerge};
  spec.rows = rows;
  // partial, out, splits[, generated_rows | generated (flags)]
  SmallVector<Type> args = {flat(b.getF32Type()), flat(e), b.getI64Type()};
  if (rows != KernelRows::All)
    args.push_back(flat(b.getI32Type()));
  if (!beginKernel(name, args, hd, 0))
    return {name, spec};
  Value partial = kernel.getArgument(0), out = kernel.getArgument(1);
  Value splits = toIndex(kernel.getArgument(2));
  Value row = gpu::BlockIdOp::create(b, gpu::Dimension::x);
  Value t = tokenOfRow(rows == KernelRows::Generated, row);
  Value h = gpu::BlockIdOp::create(b, gpu::Dimension::y);
  Value d = threadId;
  auto base = [&](Value z) {
    return mul(add(mul(add(mul(row, index(heads)), h), splits), z), index(hd + 2));
  };
  // Unrolled over the most splits there can be, so that each pass issues
  // all of its loads before it uses one (a loop over the splits waited one
  // memory latency per split and pass). Splits past `splits` read split 0
  // and weigh nothing (m = -inf).
  int64_t maxSplits = rows == KernelRows::Prompt ? kMaxPrefillSplits : kMaxDecodeSplits;
  Value minusInf = f32(-std::numeric_limits<float>::infinity());
  auto merge = [&] {
    SmallVector<Value> at, ms;
    for (int64_t z = 0; z < maxSplits; ++z) {
      Value used = arith::CmpIOp::create(b, arith::CmpIPredicate::ult, index(z), splits);
      at.push_back(base(arith::SelectOp::create(b, used, index(z), index(0))));
      ms.push_back(arith::SelectOp::create(b, used, load(partial, at.back()), minusInf));
    }
    Value m = ms[0];
    for (Value mz : ArrayRef(ms).drop_front())
      m = arith::MaximumFOp::create(b, m, mz);
    Value l = f32(0), acc = f32(0);
    for (int64_t z = 0; z < maxSplits; ++z) {
      Value c = math::ExpOp::create(b, subf(ms[z], m));
      l = addf(l, mulf(load(partial, add(at[z], index(1))), c));
      acc = addf(acc, mulf(load(partial, add(at[z], add(d, index(2)))), c));
    }
    store(arith::DivFOp::create(b, acc, l), out,
          add(mul(t, index(heads * hd)), add(mul(h, index(hd)), d)));
  };
  if (rows == KernelRows::Prompt) // generated tokens are merged by their own kernel
    ifThen(arith::CmpIOp::create(b, arith::CmpIPredicate::eq,
                                 load(kernel.getArgument(3), t),
                                 arith::ConstantIntOp::create(b, 0, 32)),
           merge);
  else
    merge();
  endKernel();
  return {name, spec};
}

// Prefill attention on tensor cores, as in FlashAttention-2 (Dao, 2023): a
// block per (tile of kPrefillTileTokens tokens, KV head), a warp per query
// head of that KV head's group, so the group's warps read the same keys.
// A warp holds its 16 query rows (rotated on RoPE layers by kvAppendKernel,
// rounded to bf16) as mma A fragments and walks the keys kPrefillKeyTile at
// a time:
// S = Q K^T and O += P V by mma.sync.m16n8k16 (bf16 operands, f32
// accumulators), with an online softmax per row in registers, in base 2
// (ex2.approx; the 1 / sqrt(hd) scale folded into the exponent's fma). The
// tile's tokens are taken in runs of one sequence; a run reads only the keys
// some of its rows see ([max(0, min p - W + 1), max p] on sliding layers,
// [0, max p] on full ones): blocks outside are skipped, keys inside masked
// per row (causal, window) on the key tiles that cross a row's bounds only.
// A step with few tiles splits each run's key tiles `splits` ways (block
// x = (tiles - 1 - tile) splits + split, as flash-decoding does for one
// token; the latest tiles, the longest, first): a split
// stores its rows' unnormalized partial results (m, l, O) for
// attentionMergeKernel (KernelRows::Prompt), as attentionKernel does; with
// one split the block stores O / l itself.
// Fragment layouts (PTX ISA, "Matrix fragments for
// mma.m16n8k16", g = lane / 4, c = lane % 4, each register a pair along k):
// A registers hold (g, 2c), (g + 8, 2c), (g, 2c + 8), (g + 8, 2c + 8);
// B registers (2c, g), (2c + 8, g); C holds (g, 2c), (g, 2c + 1),
// (g + 8, 2c), (g + 8, 2c + 1).
// Key tiles are copied into two shared buffers by cp.async (tile i + 1's
// copies in flight while the warps compute on tile i), K and V as rows of
// keys; ldmatrix gives the B fragments: K's as stored (a row of 8 features
// of a key is a column of K^T), V's transposed.
KernelGenerator::Kernel KernelGenerator::prefillAttentionKernel(attn::AttentionOp op, int64_t groupLayers,
                                                    int64_t qStride) {
  PrefillBlock k;
  k.window = op.getSlidingWindow();
  k.heads = op.getNumHeads();
  k.hd = op.getHeadDim();
  int64_t kvHeads = op.getNumKvHeads(), group = k.heads / kvHeads;
  k.qStride = qStride;
  std::string name = sanitize(
      "attention_prefill_" +
      (k.window ? "sliding" + std::to_string(*k.window) : std::string("full")) + "_h" +
      std::to_string(k.heads) + "_kv" + std::to_string(kvHeads) + "_d" + std::to_string(k.hd) +
      "_l" + std::to_string(groupLayers) + strideSuffix("q", qStride, k.heads * k.hd));
  KernelSpec spec{KernelFamily::AttentionPrefill};
  spec.rows = KernelRows::Prompt;
  spec.window = k.window.value_or(0);
  spec.strides = {qStride, 0, 0};
  Type bf16 = b.getBF16Type(), i32 = b.getI32Type(), i64 = b.getI64Type();
  // q, positions, seqs, tables, pool (as 16-byte vectors of bf16 pairs),
  // out, slot, block_size, table_width, tokens, splits, partial (f32),
  // generated
  Type quad = VectorType::get({4}, i32);
  k.threads = group * kWarp;
  if (!beginKernel(name, {flat(bf16), flat(i32), flat(i32), flat(i32), flat(quad), flat(bf16),
                          i64, i64, i64, i64, i64, flat(b.getF32Type()), flat(i32)},
                   k.threads, 0))
    return {name, spec};
  kernel->setAttr(
      NVVM::NVVMDialect::getMinctasmAttrName(),
      b.getI32IntegerAttr(std::max<int64_t>(1, kPrefillWarpsPerSM / group)));
  k.q = kernel.getArgument(0);
  k.positions = kernel.getArgument(1);
  k.seqs = kernel.getArgument(2);
  k.paged = pagedPoolArgs(3, 4, groupLayers, kvHeads * k.hd);
  k.out = kernel.getArgument(5);
  k.partial = kernel.getArgument(11);
  k.generated = kernel.getArgument(12);
  Value tokens = toIndex(kernel.getArgument(9));
  k.splits = toIndex(kernel.getArgument(10));
  // Each shared row padded by one 16-byte unit: the 8 rows an ldmatrix
  // reads then start in 8 different groups of 4 banks.
  k.keyQuads = k.hd / 8;
  k.rowQuads = k.keyQuads + 1;
  k.tile = kernel.addWorkgroupAttribution(
      MemRefType::get({2 * k.bufferBytes() / 16}, quad,
                      MemRefLayoutAttrInterface{},
                      gpu::AddressSpaceAttr::get(b.getContext(),
                                                 gpu::AddressSpace::Workgroup)),
      b.getLoc());
  k.tileAddress = addressOf(k.tile, 32);
  k.poolAddress = addressOf(k.paged.pool, 64);
  k.copyKey = divu(threadId, k.keyQuads);
  k.copyUnit = remu(threadId, k.keyQuads);
  for (auto [step, keys] : {std::pair(k.roundStep, k.keysPerRound()),
                            std::pair(k.tileStep, kPrefillKeyTile)}) {
    std::tie(step[0], step[1]) = cursorOf(index(keys), k.paged.blockSize);
  }
  k.vFromK = mul(k.paged.blockSize, index(k.paged.kvWidth));
  prefillLaneRows(k, group, tokens);
  prefillStoreResult(k, prefillRuns(k, prefillQueryFragments(k)));
  endKernel();
  return {name, spec};
}

void KernelGenerator::prefillLaneRows(PrefillBlock &k, int64_t group, Value tokens) {
  // Later tiles first: a causal tile's work grows with its position, and
  // the longest blocks started first leave the short ones to fill the last
  // wave.
  Value blockX = gpu::BlockIdOp::create(b, gpu::Dimension::x);
  Value tiles = arith::DivUIOp::create(
      b, gpu::GridDimOp::create(b, gpu::Dimension::x), k.splits);
  Value tile =
      arith::SubIOp::create(b, arith::SubIOp::create(b, tiles, index(1)),
                            arith::DivUIOp::create(b, blockX, k.splits));
  k.tileBase = mul(tile, index(kPrefillTileTokens));
  k.split = arith::RemUIOp::create(b, blockX, k.splits);
  k.kvh = gpu::BlockIdOp::create(b, gpu::Dimension::y);
  k.h = add(mul(k.kvh, index(group)), divu(threadId, kWarp));
  Value lane = remu(threadId, kWarp);
  k.g = divu(lane, 4);
  k.c = remu(lane, 4);
  k.rowsInTile = arith::MinUIOp::create(b, arith::SubIOp::create(b, tokens, k.tileBase),
                                        index(kPrefillTileTokens));
  // This lane's rows of the tile: g and g + 8. A row past the step's
  // tokens reads row 0 of the tile; it and a generated token's row are
  // computed as no key's and not stored.
  for (int r = 0; r < 2; ++r) {
    k.row[r] = add(k.g, index(8 * r));
    k.valid[r] = cmp(arith::CmpIPredicate::ult, k.row[r], k.rowsInTile);
    k.token[r] = add(k.tileBase, arith::SelectOp::create(b, k.valid[r], k.row[r], index(0)));
    k.pos[r] = toIndex(load(k.positions, k.token[r]));
    Value flag = memref::LoadOp::create(b, k.generated, ValueRange{k.token[r]});
    k.valid[r] = andi(k.valid[r], cmp(arith::CmpIPredicate::eq, flag,
                                      arith::ConstantIntOp::create(b, 0, 32)));
  }
}

SmallVector<SmallVector<Value>> KernelGenerator::prefillQueryFragments(const PrefillBlock &k) {
  SmallVector<SmallVector<Value>> qFrag;
  for (int64_t ks = 0; ks < k.hd / 16; ++ks) {
    qFrag.emplace_back();
    for (int64_t reg = 0; reg < 4; ++reg) {
      int r = reg % 2;
      Value f = add(mul(k.c, index(2)), index(ks * 16 + (reg / 2) * 8));
      Value at = add(mul(k.token[r], index(k.qStride)), add(mul(k.h, index(k.hd)), f));
      qFrag.back().push_back(packF32(load(k.q, at), load(k.q, add(at, index(1)))));
    }
  }
  return qFrag;
}

ValueRange KernelGenerator::prefillRuns(const PrefillBlock &k,
                                        ArrayRef<SmallVector<Value>> qFrag) {
  // Running state per row r of this lane: max m[r], partial sum l[r] (over
  // this lane's columns), and O as C fragments, one per 8 features.
  Value minusInf = f32(-std::numeric_limits<float>::infinity());
  SmallVector<Value> init = {index(0), minusInf, minusInf, f32(0), f32(0)};
  for (int64_t i = 0; i < k.hd / 8 * 4; ++i)
    init.push_back(f32(0));
  // A run at a time: the loop carries the next run's first row and the state.
  auto runs = scf::WhileOp::create(b, ValueRange(init).getTypes(), init, nullptr, nullptr);
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToEnd(runs.getBeforeBody());
    Value more = cmp(arith::CmpIPredicate::ult, runs.getBeforeArguments()[0], k.rowsInTile);
    scf::ConditionOp::create(b, more, runs.getBeforeArguments());
  }
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToEnd(runs.getAfterBody());
  PrefillRun run = prefillRun(k, runs.getAfterArguments()[0]);
  SmallVector<Value> yielded = {run.end};
  llvm::append_range(yielded,
                     prefillKeyTiles(k, run, qFrag, runs.getAfterArguments().drop_front()));
  scf::YieldOp::create(b, yielded);
  return runs.getResults().drop_front();
}

KernelGenerator::PrefillRun KernelGenerator::prefillRun(const PrefillBlock &k, Value start) {
  // The run: rows [start, end) of one sequence, positions in [minP, maxP].
  Value seq32 = memref::LoadOp::create(b, k.seqs, ValueRange{add(k.tileBase, start)});
  Value p0 = toIndex(load(k.positions, add(k.tileBase, start)));
  Value trueValue = arith::ConstantIntOp::create(b, 1, 1);
  auto scan = scf::ForOp::create(b, add(start, index(1)), k.rowsInTile, index(1),
                                 ValueRange{add(start, index(1)), trueValue, p0, p0});
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToEnd(scan.getBody());
    Value i = scan.getInductionVar();
    ValueRange st = scan.getRegionIterArgs();
    Value si = memref::LoadOp::create(b, k.seqs, ValueRange{add(k.tileBase, i)});
    Value pi = toIndex(load(k.positions, add(k.tileBase, i)));
    Value same = andi(st[1], cmp(arith::CmpIPredicate::eq, si, seq32));
    scf::YieldOp::create(
        b, ValueRange{arith::SelectOp::create(b, same, add(i, index(1)), st[0]), same,
                      arith::SelectOp::create(b, same, arith::MinUIOp::create(b, st[2], pi), st[2]),
                      arith::SelectOp::create(b, same, arith::MaxUIOp::create(b, st[3], pi), st[3])});
  }
  PrefillRun run;
  run.end = scan.getResult(0);
  Value minP = scan.getResult(2), maxP = scan.getResult(3);
  run.seq = toIndex(seq32);
  for (int r = 0; r < 2; ++r)
    run.inRun[r] = andi(k.valid[r], andi(cmp(arith::CmpIPredicate::uge, k.row[r], start),
                                         cmp(arith::CmpIPredicate::ult, k.row[r], run.end)));
  run.lo = index(0);
  if (k.window)
    run.lo = arith::MaxSIOp::create(b, index(0), add(minP, index(1 - *k.window)));
  Value hi = add(maxP, index(1));
  run.last = maxP;
  std::tie(run.loCursor[0], run.loCursor[1]) = cursorOf(run.lo, k.paged.blockSize);
  std::tie(run.lastCursor[0], run.lastCursor[1]) = cursorOf(maxP, k.paged.blockSize);
  // Key tiles start at multiples of kPrefillKeyTile, so that a row meets
  // the same tiles in the same order whatever else its run holds: keys a
  // row does not see change nothing of its state (exactly). With one split,
  // or a run of at most kMinPrefillSplitKeyTiles key tiles (one split holds
  // them all; the merge of one partial is exact), a row's result does not
  // depend on how the prompt was chunked or batched; a longer run's split
  // points depend on the step's splits, and its result on them (bf16
  // weights P rounded against each split's own max).
  Value firstTile = mul(divu(run.lo, kPrefillKeyTile), index(kPrefillKeyTile));
  // This block's key tiles: a contiguous share of the run's, at least
  // kMinPrefillSplitKeyTiles of them (later splits are left empty).
  Value runTiles =
      arith::CeilDivUIOp::create(b, arith::SubIOp::create(b, hi, firstTile), index(kPrefillKeyTile));
  Value share = mul(arith::MaxUIOp::create(b, arith::CeilDivUIOp::create(b, runTiles, k.splits),
                                           index(kMinPrefillSplitKeyTiles)),
                    index(kPrefillKeyTile));
  run.splitLo = arith::MinUIOp::create(b, add(firstTile, mul(k.split, share)), hi);
  run.splitHi = arith::MinUIOp::create(b, add(run.splitLo, share), hi);
  return run;
}

ValueRange KernelGenerator::prefillKeyTiles(const PrefillBlock &k, const PrefillRun &run,
                                            ArrayRef<SmallVector<Value>> qFrag, ValueRange state) {
  double log2Scale = M_LOG2E / std::sqrt((double)k.hd);
  SmallVector<Value> init(state.begin(), state.end());
  int64_t stateSize = init.size();
  // Carried: the buffer holding the loop's tile, the next tile's cursor.
  SmallVector<Value> first(2);
  std::tie(first[0], first[1]) = cursorOf(add(run.splitLo, k.copyKey), k.paged.blockSize);
  ifThen(cmp(arith::CmpIPredicate::ult, run.splitLo, run.splitHi),
         [&] { prefillCopyTile(k, run, run.splitLo, first, index(0)); });
  auto [nextBlock, nextSlot] = addToCursor(first[0], first[1], k.tileStep[0],
                                           k.tileStep[1], k.paged.blockSize);
  init.append({index(0), nextBlock, nextSlot});
  // This lane's ldmatrix rows (lane i: row i % 8 of matrix i / 8), as
  // 16-byte units of a buffer. K: key 8 nb + i % 8, unit 4 p + i / 8, so
  // matrix i / 8 holds features 32 p + 8 (i / 8) + [0, 8): B registers 0
  // and 1 of steps ks = 2 p and 2 p + 1. V: key 16 kk + i % 8 + 8 (i / 8 % 2),
  // unit 2 fp + i / 16: keys [0, 8) and [8, 16) of feature tiles 2 fp and
  // 2 fp + 1, transposed.
  Value lane = remu(threadId, kWarp);
  Value kUnit = add(mul(remu(lane, 8), index(k.rowQuads)), divu(lane, 8));
  Value vUnit =
      add(mul(add(remu(lane, 8), mul(remu(divu(lane, 8), 2), index(8))),
              index(k.rowQuads)),
          divu(lane, 16));
  auto keys = scf::ForOp::create(b, run.splitLo, run.splitHi, index(kPrefillKeyTile), init);
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToEnd(keys.getBody());
    Value kt = keys.getInductionVar();
    ValueRange args = keys.getRegionIterArgs();
    Value buffer = args[stateSize];
    SmallVector<Value> cursor = {args[stateSize + 1], args[stateSize + 2]};
    // One barrier a tile: after it every thread's copies of this tile have
    // landed, and every warp is done with the previous tile, whose buffer
    // the next tile's copies then take.
    NVVM::CpAsyncWaitGroupOp::create(b, 0);
    gpu::BarrierOp::create(b);
    Value other = arith::SubIOp::create(b, index(1), buffer);
    Value nextTile = add(kt, index(kPrefillKeyTile));
    ifThen(cmp(arith::CmpIPredicate::ult, nextTile, run.splitHi),
           [&] { prefillCopyTile(k, run, nextTile, cursor, other); });
    Value bufferAddress =
        add(k.tileAddress,
            arith::IndexCastUIOp::create(b, b.getI32Type(),
                                         mul(buffer, index(k.bufferBytes()))));
    auto rowAddress = [&](Value row, int64_t kv) {
      Value units = add(row, index(kv * kPrefillKeyTile * k.rowQuads));
      return add(bufferAddress, arith::IndexCastUIOp::create(
                                    b, b.getI32Type(), mul(units, index(16))));
    };
    SmallVector<SmallVector<Value>> weights =
        prefillScores(k, run, qFrag, kt, rowAddress(kUnit, 0));
    SmallVector<Value> next =
        softmaxTileUpdate(args.take_front(stateSize), weights, log2Scale);
    Value vAddress = rowAddress(vUnit, 1);
    accumulatePV(
        weights,
        [&](int64_t kk) {
          SmallVector<Value> fragments;
          for (int64_t fp = 0; fp < k.hd / 16; ++fp)
            llvm::append_range(
                fragments,
                loadMatrices(
                    add(vAddress, i32((kk * 16 * k.rowQuads + 2 * fp) * 16)),
                    true));
          return fragments;
        },
        MutableArrayRef<Value>(next).drop_front(4));
    auto [block, slot] = addToCursor(cursor[0], cursor[1], k.tileStep[0],
                                     k.tileStep[1], k.paged.blockSize);
    next.append({other, block, slot});
    scf::YieldOp::create(b, next);
  }
  // The next run's first copies go to buffer 0: every warp must be done
  // with this run's last tile first.
  gpu::BarrierOp::create(b);
  return keys.getResults().take_front(stateSize);
}

// Thread t copies unit t % keyQuads of keys t / keyQuads + i keysPerRound,
// so consecutive threads copy consecutive 16 bytes of a row.
void KernelGenerator::prefillCopyTile(const PrefillBlock &k,
                                      const PrefillRun &run, Value kt,
                                      ArrayRef<Value> cursor, Value buffer) {
  Value bufferUnits = mul(buffer, index(k.bufferBytes() / 16));
  Value tableIndex = cursor[0], slot = cursor[1];
  for (int64_t i = 0; i < k.copyRounds(); ++i) {
    if (i > 0)
      std::tie(tableIndex, slot) = addToCursor(
          tableIndex, slot, k.roundStep[0], k.roundStep[1], k.paged.blockSize);
    Value key = add(k.copyKey, index(i * k.keysPerRound()));
    auto copy = [&] {
      Value j = add(kt, key);
      Value below = cmp(arith::CmpIPredicate::ult, j, run.lo);
      Value above = cmp(arith::CmpIPredicate::ugt, j, run.last);
      auto clamp = [&](Value v, int c) {
        return arith::SelectOp::create(
            b, below, run.loCursor[c],
            arith::SelectOp::create(b, above, run.lastCursor[c], v));
      };
      Value block = tableBlock(k.paged, run.seq, clamp(tableIndex, 0));
      Value kOffset = add(kvRowOffset(k.paged, block, clamp(slot, 1), 0),
                          mul(k.kvh, index(k.hd)));
      for (int64_t kv = 0; kv < 2; ++kv) {
        Value row = kv == 0 ? kOffset : add(kOffset, k.vFromK);
        Value from = add(divu(row, 8), k.copyUnit);
        Value to = add(
            bufferUnits,
            add(mul(add(key, index(kv * kPrefillKeyTile)), index(k.rowQuads)),
                k.copyUnit));
        Value src =
            add(k.poolAddress, arith::IndexCastUIOp::create(
                                   b, b.getI64Type(), mul(from, index(16))));
        Value dst =
            add(k.tileAddress, arith::IndexCastUIOp::create(
                                   b, b.getI32Type(), mul(to, index(16))));
        NVVM::CpAsyncOp::create(b, pointerAt(dst, 3), pointerAt(src, 1), 16,
                                NVVM::LoadCacheModifierKind::CG, Value());
      }
    };
    if ((i + 1) * k.keysPerRound() > kPrefillKeyTile)
      ifThen(cmp(arith::CmpIPredicate::ult, key, index(kPrefillKeyTile)), copy);
    else
      copy();
  }
  NVVM::CpAsyncCommitGroupOp::create(b);
}

SmallVector<SmallVector<Value>>
KernelGenerator::prefillScores(const PrefillBlock &k, const PrefillRun &run,
                               ArrayRef<SmallVector<Value>> qFrag, Value kt,
                               Value kAddress) {
  Value minusInf = f32(-std::numeric_limits<float>::infinity());
  // S = Q K^T for keys kt + 8 nb + [0, 8): this lane's B column is key
  // kt + 8 nb + g; its C columns are keys kt + 8 nb + 2c + {0, 1}.
  SmallVector<SmallVector<Value>> sTile;
  SmallVector<Value> flat;
  for (int64_t nb = 0; nb < kPrefillKeyTile / 8; ++nb) {
    SmallVector<Value> words; // [ks][2]: B registers of features 16 ks on
    for (int64_t p = 0; p < k.hd / 32; ++p)
      llvm::append_range(
          words,
          loadMatrices(add(kAddress, i32((nb * 8 * k.rowQuads + 4 * p) * 16)),
                       false));
    SmallVector<Value> acc(4, f32(0));
    for (int64_t ks = 0; ks < k.hd / 16; ++ks)
      acc = mma(qFrag[ks], {words[2 * ks], words[2 * ks + 1]}, acc);
    llvm::append_range(flat, acc);
  }
  // Key j is seen by row r when r is in the run, j <= p and, on sliding
  // layers, p - W < j. Only tiles that cross a row's bounds need the
  // masks: a lane whose rows see the whole tile keeps S as it is.
  Value lastKey = add(kt, index(kPrefillKeyTile - 1));
  Value whole = arith::ConstantIntOp::create(b, 1, 1);
  for (int r = 0; r < 2; ++r) {
    whole = andi(whole, andi(run.inRun[r], cmp(arith::CmpIPredicate::ule,
                                               lastKey, k.pos[r])));
    if (k.window)
      whole = andi(whole, cmp(arith::CmpIPredicate::ugt,
                              add(kt, index(*k.window)), k.pos[r]));
  }
  auto masked = scf::IfOp::create(b, ValueRange(flat).getTypes(), whole,
                                  /*withElse=*/true);
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(masked.thenBlock());
    scf::YieldOp::create(b, flat);
    b.setInsertionPointToStart(masked.elseBlock());
    SmallVector<Value> select;
    for (int64_t e = 0; e < (int64_t)flat.size(); ++e) {
      int r = e % 4 / 2;
      Value j = add(kt, add(index(e / 4 * 8 + e % 2), mul(k.c, index(2))));
      Value seen = andi(run.inRun[r], cmp(arith::CmpIPredicate::ule, j, k.pos[r]));
      if (k.window)
        seen = andi(seen, cmp(arith::CmpIPredicate::ugt, add(j, index(*k.window)), k.pos[r]));
      select.push_back(arith::SelectOp::create(b, seen, flat[e], minusInf));
    }
    scf::YieldOp::create(b, select);
  }
  for (int64_t nb = 0; nb < kPrefillKeyTile / 8; ++nb)
    sTile.push_back(SmallVector<Value>(masked.getResults().slice(nb * 4, 4)));
  return sTile;
}

SmallVector<Value>
KernelGenerator::softmaxTileUpdate(ValueRange state,
                                   MutableArrayRef<SmallVector<Value>> sTile,
                                   double log2Scale) {
  // P = 2^((x - from) log2Scale) as one fma and ex2.approx.
  Value scale = f32(log2Scale);
  auto weigh = [&](Value x, Value negFrom) -> Value {
    Value e = log2Scale == 1.0 ? addf(x, negFrom)
                               : math::FmaOp::create(b, x, scale, negFrom);
    return math::Exp2Op::create(b, e);
  };
  // The rescale of the state from the difference of the maxima, so that it
  // is exactly 1 where the maximum did not change (fma(m, s, -from s) is
  // the rounding error of from s, not 0): a key tile that a row does not
  // see leaves its state as it was, bit for bit.
  auto rescale = [&](Value mOld, Value from) -> Value {
    Value d = subf(mOld, from);
    return math::Exp2Op::create(b, log2Scale == 1.0 ? d : mulf(d, scale));
  };
  // Online softmax per row (a row's columns are spread over 4 lanes).
  SmallVector<Value> next(state.begin(), state.end());
  Value negFrom[2], alpha[2];
  for (int r = 0; r < 2; ++r) {
    Value m = state[r];
    for (auto &acc : sTile)
      m = maxf(m, maxf(acc[2 * r], acc[2 * r + 1]));
    m = maxf(m, xorShuffle(m, 1));
    m = maxf(m, xorShuffle(m, 2));
    // A row that has seen no key yet keeps m = -inf and weighs from 0.
    Value from = softmaxFrom(m);
    negFrom[r] = mulf(from, f32(-log2Scale));
    alpha[r] = rescale(state[r], from);
    next[r] = m;
    next[2 + r] = mulf(state[2 + r], alpha[r]);
  }
  for (auto &acc : sTile)
    for (int64_t i = 0; i < 4; ++i) {
      acc[i] = weigh(acc[i], negFrom[i / 2]);
      next[2 + i / 2] = addf(next[2 + i / 2], acc[i]);
    }
  for (size_t i = 0; 4 + i < state.size(); ++i)
    next[4 + i] = mulf(state[4 + i], alpha[(i % 4) / 2]);
  return next;
}

void KernelGenerator::accumulatePV(
    ArrayRef<SmallVector<Value>> pTile,
    function_ref<SmallVector<Value>(int64_t)> vFragments,
    MutableArrayRef<Value> o) {
  // O += P V, 16 keys at a time: P's A fragment is two adjacent S tiles.
  for (int64_t kk = 0; kk < (int64_t)pTile.size() / 2; ++kk) {
    SmallVector<Value> a = {packF32(pTile[2 * kk][0], pTile[2 * kk][1]),
                            packF32(pTile[2 * kk][2], pTile[2 * kk][3]),
                            packF32(pTile[2 * kk + 1][0], pTile[2 * kk + 1][1]),
                            packF32(pTile[2 * kk + 1][2], pTile[2 * kk + 1][3])};
    SmallVector<Value> v = vFragments(kk);
    for (int64_t fb = 0; fb < (int64_t)o.size() / 4; ++fb) {
      MutableArrayRef<Value> tileO = o.slice(fb * 4, 4);
      SmallVector<Value> sum = mma(a, {v[2 * fb], v[2 * fb + 1]}, tileO);
      std::copy(sum.begin(), sum.end(), tileO.begin());
    }
  }
}

void KernelGenerator::prefillStoreResult(const PrefillBlock &k, ValueRange state) {
  // One split: out = O / l, l summed over the row's 4 lanes. Several: the
  // partial results m, l and O of (token, head, split).
  Value whole = cmp(arith::CmpIPredicate::eq, k.splits, index(1));
  for (int r = 0; r < 2; ++r) {
    Value l = state[2 + r];
    l = addf(l, xorShuffle(l, 1));
    l = addf(l, xorShuffle(l, 2));
    Value rowBase = add(mul(k.token[r], index(k.heads * k.hd)), mul(k.h, index(k.hd)));
    Value partialBase = mul(add(mul(add(mul(k.token[r], index(k.heads)), k.h), k.splits), k.split),
                            index(k.hd + 2));
    // Column 2c + j of feature tile fb is feature 8 fb + 2c + j.
    auto feature = [&](int64_t fb, int64_t j) {
      return add(mul(k.c, index(2)), index(8 * fb + j));
    };
    ifThen(andi(k.valid[r], whole), [&] {
      for (int64_t fb = 0; fb < k.hd / 8; ++fb)
        for (int64_t j = 0; j < 2; ++j)
          store(arith::DivFOp::create(b, state[4 + fb * 4 + r * 2 + j], l), k.out,
                add(rowBase, feature(fb, j)));
    });
    ifThen(andi(k.valid[r], cmp(arith::CmpIPredicate::ne, k.splits, index(1))), [&] {
      for (int64_t fb = 0; fb < k.hd / 8; ++fb)
        for (int64_t j = 0; j < 2; ++j)
          store(state[4 + fb * 4 + r * 2 + j], k.partial,
                add(partialBase, add(index(2), feature(fb, j))));
      ifThen(cmp(arith::CmpIPredicate::eq, k.c, index(0)), [&] {
        // m in the merge's units: the scores' (raw dot products) over sqrt(hd).
        store(mulf(state[r], f32(1.0 / std::sqrt((double)k.hd))), k.partial,
              partialBase);
        store(l, k.partial, add(partialBase, index(1)));
      });
    });
  }
}

Value KernelGenerator::packF32(Value lo, Value hi) {
  Value pair = NVVM::ConvertF32x2ToBF16x2Op::create(
      b, VectorType::get({2}, b.getBF16Type()), hi, lo, Value(),
      NVVM::FPRoundingModeAttr::get(b.getContext(), NVVM::FPRoundingMode::RN));
  return LLVM::BitcastOp::create(b, b.getI32Type(), pair).getResult();
}

SmallVector<Value> KernelGenerator::loadMatrices(Value address,
                                                 bool transpose) {
  Type i32t = b.getI32Type();
  Type result = LLVM::LLVMStructType::getLiteral(b.getContext(),
                                                 {i32t, i32t, i32t, i32t});
  Value m = NVVM::LdMatrixOp::create(
      b, result, pointerAt(address, 3), 4,
      transpose ? NVVM::MMALayout::col : NVVM::MMALayout::row,
      NVVM::LdStMatrixShapeAttr::get(b.getContext(), 8, 8),
      NVVM::LdStMatrixEltType::B16);
  SmallVector<Value> r;
  for (int64_t i = 0; i < 4; ++i)
    r.push_back(LLVM::ExtractValueOp::create(b, m, ArrayRef<int64_t>{i}));
  return r;
}

SmallVector<Value> KernelGenerator::quadWords(Value mem, Value rowQuad, Value first,
                                              int64_t count) {
  SmallVector<Value> words;
  for (int64_t v = 0; v < std::max<int64_t>(count / 4, 1); ++v) {
    Value quadValue =
        memref::LoadOp::create(b, mem, ValueRange{add(rowQuad, add(divu(first, 4), index(v)))});
    for (int64_t i = 0; i < std::min<int64_t>(count, 4); ++i) {
      Value at = count % 4 == 0 ? index(i) : add(remu(first, 4), index(i));
      words.push_back(LLVM::ExtractElementOp::create(
          b, quadValue, arith::IndexCastOp::create(b, b.getI32Type(), at).getResult()));
    }
  }
  return words;
}

Value KernelGenerator::lowHalves(Value lo, Value hi) {
  Value mask = arith::ConstantIntOp::create(b, 0xFFFF, 32);
  Value sixteen = arith::ConstantIntOp::create(b, 16, 32);
  return arith::OrIOp::create(b, arith::AndIOp::create(b, lo, mask),
                              arith::ShLIOp::create(b, hi, sixteen));
}

Value KernelGenerator::highHalves(Value lo, Value hi) {
  Value mask = arith::ConstantIntOp::create(b, 0xFFFF0000LL, 32);
  Value sixteen = arith::ConstantIntOp::create(b, 16, 32);
  return arith::OrIOp::create(b, arith::ShRUIOp::create(b, lo, sixteen),
                              arith::AndIOp::create(b, hi, mask));
}

SmallVector<Value> KernelGenerator::mma(ArrayRef<Value> a, ArrayRef<Value> bReg,
                                        ArrayRef<Value> c) {
  Type f32t = b.getF32Type();
  Type accType = LLVM::LLVMStructType::getLiteral(b.getContext(), {f32t, f32t, f32t, f32t});
  Value d = NVVM::MmaOp::create(b, accType, a, bReg, c, {16, 8, 16}, std::nullopt, std::nullopt,
                                std::array<NVVM::MMATypes, 2>{NVVM::MMATypes::bf16,
                                                              NVVM::MMATypes::bf16},
                                std::array<NVVM::MMALayout, 2>{NVVM::MMALayout::row,
                                                               NVVM::MMALayout::col});
  SmallVector<Value> r;
  for (int64_t i = 0; i < 4; ++i)
    r.push_back(LLVM::ExtractValueOp::create(b, d, ArrayRef<int64_t>{i}));
  return r;
}

} // namespace mlir::cohere2c::attn_to_gpu
