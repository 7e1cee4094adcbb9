//===- SplitAttentionKernel.cpp - attention on CUDA cores, merge ----------===//

#include "Conversion/AttnToGPU/KernelGenerator.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"

#include <cmath>
#include <limits>

namespace mlir::cohere2c::attn_to_gpu {

Value KernelGenerator::tokenOfRow(bool generatedOnly, Value row) {
  if (!generatedOnly)
    return row;
  // The last argument (workgroup memory comes after the arguments).
  Value rows = kernel.getArgument(kernel.getFunctionType().getNumInputs() - 1);
  return toIndex(memref::LoadOp::create(b, rows, ValueRange{row}));
}

std::string KernelGenerator::splitAttentionName(attn::AttentionOp op,
                                                int64_t groupLayers,
                                                int64_t qStride) {
  std::optional<int64_t> window = op.getSlidingWindow();
  int64_t heads = op.getNumHeads(), hd = op.getHeadDim();
  return "attention_" +
         (window ? "sliding" + std::to_string(*window) : std::string("full")) +
         "_h" + std::to_string(heads) + "_kv" +
         std::to_string(op.getNumKvHeads()) + "_d" + std::to_string(hd) + "_l" +
         std::to_string(groupLayers) + strideSuffix("q", qStride, heads * hd);
}

KernelGenerator::SplitAttentionBlock
KernelGenerator::splitAttentionBlock(bool generatedOnly) {
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
KernelGenerator::Kernel KernelGenerator::attentionKernel(Type e,
                                                         attn::AttentionOp op,
                                                         int64_t groupLayers,
                                                         int64_t qStride) {
  std::optional<int64_t> window = op.getSlidingWindow();
  int64_t heads = op.getNumHeads(), kvHeads = op.getNumKvHeads(),
          hd = op.getHeadDim();
  int64_t group = heads / kvHeads, perLane = hd / kKeyLanes;
  std::string name = sanitize(splitAttentionName(op, groupLayers, qStride));
  KernelSpec spec{KernelFamily::Attention};
  spec.rows = KernelRows::All;
  spec.window = window.value_or(0);
  spec.strides = {qStride, 0, 0};
  Type i32 = b.getI32Type(), i64 = b.getI64Type();
  int64_t chunk =
      std::min<int64_t>(perLane, 16 / (e.getIntOrFloatBitWidth() / 8));
  // q and pool as vectors of chunk elements; q, positions, seqs, tables, pool,
  // out, slot, block_size, table_width, splits, partial (f32):
  // prefillAttentionKernel's order
  Type chunks = flat(VectorType::get({chunk}, e));
  SmallVector<Type> args = {
      chunks, flat(i32), flat(i32), flat(i32),           chunks, flat(e), i64,
      i64,    i64,       i64,       flat(b.getF32Type())};
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
  std::tie(keys.lo, keys.hi) =
      attentionWarpKeys(window, p, blk.splits, blk.split, warp);

  // q of the group's heads, scaled by log2(e) / sqrt(hd): [group][perLane].
  // The kernel's softmax runs in base 2 (2^(x log2 e) = e^x; ex2.approx is
  // one instruction where expf is several, as in FlashAttention-2), its
  // maxima in those units until they are written for the merge kernel.
  Value firstHead = mul(kvh, index(group));
  Value qBase = add(mul(t, index(qStride)), add(mul(firstHead, index(hd)),
                                                mul(keyLane, index(perLane))));
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
  std::tie(keys.stepBlocks, keys.stepSlots) =
      cursorOf(index(loopStep), keys.paged.blockSize);
  std::tie(keys.lastBlock, keys.lastSlot) = cursorOf(
      arith::SubIOp::create(b, keys.hi, index(1)), keys.paged.blockSize);
  size_t softmaxValues = init.size();
  init.append(keyCursors(keys, keySub));
  auto loop = scf::ForOp::create(b, keys.lo, keys.hi, index(loopStep), init);
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToEnd(loop.getBody());
    ValueRange carried = loop.getRegionIterArgs();
    SmallVector<Value> next = attentionKeyGroup(
        keys, qv, group, loop.getInductionVar(), keySub,
        carried.take_front(softmaxValues), carried.drop_front(softmaxValues));
    next.append(advanceKeyCursors(keys, carried.drop_front(softmaxValues)));
    scf::YieldOp::create(b, next);
  }
  // Merge the warp's lane groups, publish the warp's results, then merge
  // the block's warps.
  SmallVector<Value> merged = attentionMergeKeySubgroups(
      loop.getResults().take_front(softmaxValues), group);
  attentionPublishWarp(scratchLayout, merged, warp, keyLane, keySub);
  attentionMergeWarps(scratchLayout,
                      AttentionOutput{blk.out, blk.partial, t, blk.row,
                                      blk.split, blk.splits, firstHead, heads,
                                      hd});
  endKernel();
  return {name, spec};
}

void KernelGenerator::storeAttentionResult(const AttentionOutput &o, Value g,
                                           Value d, Value m, Value l,
                                           Value acc) {
  Value h = add(o.firstHead, g);
  auto ifElse =
      scf::IfOp::create(b, cmp(arith::CmpIPredicate::eq, o.splits, index(1)),
                        /*withElseRegion=*/true);
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(&ifElse.getThenRegion().front());
  store(arith::DivFOp::create(b, acc, l), o.out,
        add(mul(o.token, index(o.heads * o.hd)), add(mul(h, index(o.hd)), d)));
  b.setInsertionPointToStart(&ifElse.getElseRegion().front());
  storeAttentionPartial(o, g, d, m, l, acc);
}

void KernelGenerator::storeAttentionPartial(const AttentionOutput &o, Value g,
                                            Value d, Value m, Value l,
                                            Value acc) {
  Value h = add(o.firstHead, g);
  Value base =
      mul(add(mul(add(mul(o.row, index(o.heads)), h), o.splits), o.split),
          index(o.hd + 2));
  memref::StoreOp::create(b, acc, o.partial,
                          ValueRange{add(base, add(d, index(2)))});
  ifThen(cmp(arith::CmpIPredicate::eq, d, index(0)), [&] {
    memref::StoreOp::create(b, mulf(m, f32(M_LN2)), o.partial,
                            ValueRange{base});
    memref::StoreOp::create(b, l, o.partial, ValueRange{add(base, index(1))});
  });
}

std::pair<Value, Value>
KernelGenerator::splitKeys(std::optional<int64_t> window, Value p, Value splits,
                           Value split) {
  Value first = index(0);
  if (window)
    first = arith::MaxSIOp::create(b, index(0), add(p, index(1 - *window)));
  Value end = add(p, index(1));
  Value share = arith::CeilDivUIOp::create(
      b, arith::SubIOp::create(b, end, first), splits);
  Value lo = arith::MinUIOp::create(b, add(first, mul(split, share)), end);
  return {lo, arith::MinUIOp::create(b, add(lo, share), end)};
}

std::pair<Value, Value>
KernelGenerator::attentionWarpKeys(std::optional<int64_t> window, Value p,
                                   Value splits, Value split, Value warp) {
  auto [blockLo, blockHi] = splitKeys(window, p, splits, split);
  Value share = arith::CeilDivUIOp::create(
      b, arith::SubIOp::create(b, blockHi, blockLo), index(kAttentionWarps));
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

SmallVector<Value> KernelGenerator::keyCursors(const PagedKeys &keys,
                                               Value keySub) {
  SmallVector<Value> cursors;
  for (int64_t u = 0; u < kKeysInFlight; ++u) {
    Value j = add(add(keys.lo, index(u * kKeySubgroups)), keySub);
    auto [tableIndex, slot] = cursorOf(j, keys.paged.blockSize);
    cursors.append({tableIndex, slot});
  }
  return cursors;
}

SmallVector<Value> KernelGenerator::advanceKeyCursors(const PagedKeys &keys,
                                                      ValueRange cursors) {
  SmallVector<Value> next;
  for (size_t c = 0; c < cursors.size(); c += 2) {
    auto [block, slot] =
        addToCursor(cursors[c], cursors[c + 1], keys.stepBlocks, keys.stepSlots,
                    keys.paged.blockSize);
    next.append({block, slot});
  }
  return next;
}

std::pair<Value, Value> KernelGenerator::cursorOf(Value j, Value blockSize) {
  return {arith::DivUIOp::create(b, j, blockSize),
          arith::RemUIOp::create(b, j, blockSize)};
}

std::pair<Value, Value> KernelGenerator::addToCursor(Value tableIndex,
                                                     Value slot, Value blocks,
                                                     Value slots,
                                                     Value blockSize) {
  // slots < block size and slot < block size: at most one carry.
  Value sum = add(slot, slots);
  Value carry = cmp(arith::CmpIPredicate::uge, sum, blockSize);
  Value one = arith::ConstantOp::create(b, b.getIntegerAttr(sum.getType(), 1));
  Value zero = arith::ConstantOp::create(b, b.getIntegerAttr(sum.getType(), 0));
  return {add(add(tableIndex, blocks),
              arith::SelectOp::create(b, carry, one, zero)),
          arith::SelectOp::create(
              b, carry, arith::SubIOp::create(b, sum, blockSize), sum)};
}

SmallVector<Value>
KernelGenerator::attentionKeyGroup(const PagedKeys &keys, ArrayRef<Value> qv,
                                   int64_t group, Value j0, Value keySub,
                                   ValueRange state, ValueRange cursors) {
  int64_t perLane = qv.size() / group, stride = 2 + perLane;
  // dots[u * group + g]: this lane group's key u against head g's q.
  SmallVector<Value> dots, valid;
  SmallVector<SmallVector<Value>> values;
  for (int64_t u = 0; u < kKeysInFlight; ++u) {
    Value ju = add(add(j0, index(u * kKeySubgroups)), keySub);
    valid.push_back(
        arith::CmpIOp::create(b, arith::CmpIPredicate::ult, ju, keys.hi));
    Value tableIndex =
        arith::SelectOp::create(b, valid[u], cursors[2 * u], keys.lastBlock);
    Value inBlock =
        arith::SelectOp::create(b, valid[u], cursors[2 * u + 1], keys.lastSlot);
    Value block = tableBlock(keys.paged, keys.seq, tableIndex);
    Value kBase =
        add(kvRowOffset(keys.paged, block, inBlock, 0), keys.headOffset);
    Value vBase =
        add(kvRowOffset(keys.paged, block, inBlock, 1), keys.headOffset);
    SmallVector<Value> k =
        loadChunks(keys.paged.pool, kBase, perLane, keys.chunk);
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
    Value correction = exp2(subf(s[0], from));
    size_t at = next.size();
    next.append({mNew, mulf(s[1], correction)});
    for (int64_t i = 0; i < perLane; ++i)
      next.push_back(mulf(s[2 + i], correction));
    for (int64_t u = 0; u < kKeysInFlight; ++u) {
      Value weight = exp2(subf(dots[u * group + g], from));
      next[at + 1] = addf(next[at + 1], weight);
      for (int64_t i = 0; i < perLane; ++i)
        next[at + 2 + i] = fma(weight, values[u][i], next[at + 2 + i]);
    }
  }
  return next;
}

// Butterfly over the lane groups: after it every group holds the warp's
// (m, l, acc) per head, combined as the online softmax combines two ranges.
SmallVector<Value> KernelGenerator::attentionMergeKeySubgroups(ValueRange state,
                                                               int64_t group) {
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
      Value mine = exp2(subf(s[0], from)), theirs = exp2(subf(other[0], from));
      s[0] = m;
      for (int64_t i = 1; i < stride; ++i)
        s[i] = fma(s[i], mine, mulf(other[i], theirs));
    }
  return merged;
}

void KernelGenerator::attentionPublishWarp(const AttentionScratch &layout,
                                           ValueRange state, Value warp,
                                           Value keyLane, Value keySub) {
  int64_t perLane = layout.hd / kKeyLanes, stride = 2 + perLane;
  Value firstGroup =
      arith::CmpIOp::create(b, arith::CmpIPredicate::eq, keySub, index(0));
  Value laneZero =
      andi(firstGroup, arith::CmpIOp::create(b, arith::CmpIPredicate::eq,
                                             keyLane, index(0)));
  for (int64_t g = 0; g < layout.group; ++g) {
    ValueRange s = state.slice(g * stride, stride);
    Value slot = add(mul(warp, index(layout.group)), index(g));
    ifThen(laneZero, [&] {
      memref::StoreOp::create(b, s[0], scratch, ValueRange{slot});
      memref::StoreOp::create(b, s[1], scratch,
                              ValueRange{layout.sumAt(*this, slot)});
    });
    Value accBase =
        add(layout.accAt(*this, slot), mul(keyLane, index(perLane)));
    ifThen(firstGroup, [&] {
      for (int64_t i = 0; i < perLane; ++i)
        memref::StoreOp::create(b, s[2 + i], scratch,
                                ValueRange{add(accBase, index(i))});
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
    auto read = [&](Value at) {
      return memref::LoadOp::create(b, scratch, ValueRange{at});
    };
    Value m = minusInf;
    for (int64_t w = 0; w < kAttentionWarps; ++w)
      m = arith::MaximumFOp::create(b, m, read(slotOf(w)));
    Value from = softmaxFrom(m);
    Value l = f32(0), acc = f32(0);
    for (int64_t w = 0; w < kAttentionWarps; ++w) {
      Value c = exp2(subf(read(slotOf(w)), from));
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
KernelGenerator::Kernel KernelGenerator::attentionMergeKernel(Type e,
                                                              int64_t heads,
                                                              int64_t hd,
                                                              KernelRows rows) {
  std::string name =
      sanitize(rows == KernelRows::Prompt
                   ? "attention_merge_prompt_h" + std::to_string(heads) + "_d" +
                         std::to_string(hd)
                   : "attention_merge_h" + std::to_string(heads) + "_d" +
                         std::to_string(hd) +
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
    return mul(add(mul(add(mul(row, index(heads)), h), splits), z),
               index(hd + 2));
  };
  // Unrolled over the most splits there can be, so that each pass issues
  // all of its loads before it uses one (a loop over the splits waited one
  // memory latency per split and pass). Splits past `splits` read split 0
  // and weigh nothing (m = -inf).
  int64_t maxSplits =
      rows == KernelRows::Prompt ? kMaxPrefillSplits : kMaxDecodeSplits;
  Value minusInf = f32(-std::numeric_limits<float>::infinity());
  auto merge = [&] {
    SmallVector<Value> at, ms;
    for (int64_t z = 0; z < maxSplits; ++z) {
      Value used =
          arith::CmpIOp::create(b, arith::CmpIPredicate::ult, index(z), splits);
      at.push_back(base(arith::SelectOp::create(b, used, index(z), index(0))));
      ms.push_back(
          arith::SelectOp::create(b, used, load(partial, at.back()), minusInf));
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
  if (rows ==
      KernelRows::Prompt) // generated tokens are merged by their own kernel
    ifThen(arith::CmpIOp::create(b, arith::CmpIPredicate::eq,
                                 load(kernel.getArgument(3), t),
                                 arith::ConstantIntOp::create(b, 0, 32)),
           merge);
  else
    merge();
  endKernel();
  return {name, spec};
}

} // namespace mlir::cohere2c::attn_to_gpu
