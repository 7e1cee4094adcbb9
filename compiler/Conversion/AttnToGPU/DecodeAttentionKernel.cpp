//===- DecodeAttentionKernel.cpp - Decode attention on tensor cores -------===//
//
// bf16 attention of a step's generated tokens, the query heads of a KV head
// as the rows of mma tiles.
//
//===----------------------------------------------------------------------===//

#include "KernelGenerator.h"

#include <cmath>
#include <limits>

namespace mlir::cohere2c::attn_to_gpu {

// Flash-decoding (Dao et al., 2023) on tensor cores, with the query heads
// that share a KV head (grouped-query attention, Ainslie et al., 2023) as
// the rows of mma.sync.m16n8k16 tiles, as FlashInfer computes grouped
// decode: row i of a warp's Q fragment is query head i of the group (rows
// past the group hold zeros and are not stored), the columns are keys, so
// S = Q K^T and O += P V are prefillAttentionKernel's fragments for one
// token. attentionKernel spends its issue slots on the dot products' FMAs
// and shuffles and on a softmax update per key; here 16 keys are 48 mma
// instructions (head_dim 128) and a few dozen others per lane, and the
// kernel waits on its loads alone.
// A block of one warp per (generated token, split, KV head): the warp reads
// the split's keys in tiles of kDecodeKeyTile, its fragments from the pool
// straight into registers (no shared memory), the next tile's loads issued
// before the current tile is computed, and stores its result from the
// fragments (no merge between warps, no barrier). One warp rather than
// attentionKernel's four: at a decode step's short contexts (a few hundred
// keys) four warps had two or three tiles each, and a warp's fixed cost
// (the loads of q, the block table and the first tile, one after another)
// was most of the kernel's time; the step's splits (kDecodeSplitTokens)
// supply the parallelism instead. Scores are in base 2 (scaled by
// log2(e) / sqrt(d)), as attentionKernel's. P is rounded to bf16 for P V,
// as in the prefill kernel.
// Fragments (prefillAttentionKernel's layouts) with the features permuted
// so that a lane reads contiguous memory straight from the pool (a sum over
// features does not depend on their order; the output is stored back in
// place): in S = Q K^T, step ks's k-index pair 2c (2c + 8) is feature pair
// c hd/4 + 4 ks (+ 2), so lane (g, c) holds features c hd/4 + [0, hd/4) of
// keys g and 8 + g; in O = P V, column n of feature tile fb is feature
// n hd/8 + fb, so it holds features g hd/8 + [0, hd/8) of keys 2c, 2c + 1,
// 2c + 8 and 2c + 9.
KernelGenerator::Kernel KernelGenerator::decodeAttentionKernel(attn::AttentionOp op,
                                                               int64_t groupLayers,
                                                               int64_t qStride) {
  std::optional<int64_t> window = op.getSlidingWindow();
  int64_t heads = op.getNumHeads(), kvHeads = op.getNumKvHeads(), hd = op.getHeadDim();
  DecodeWarp w;
  w.group = heads / kvHeads;
  w.hd = hd;
  std::string name = sanitize(splitAttentionName(op, groupLayers, qStride) + "_generated");
  KernelSpec spec{KernelFamily::Attention};
  spec.rows = KernelRows::Generated;
  spec.window = window.value_or(0);
  spec.strides = {qStride, 0, 0};
  Type bf16 = b.getBF16Type(), word = b.getI32Type(), i64 = b.getI64Type();
  // attentionKernel's arguments (the pool as 16-byte units), then generated_rows.
  Type quad = VectorType::get({4}, word);
  if (!beginKernel(name,
                   {flat(bf16), flat(word), flat(word), flat(word), flat(quad),
                    flat(bf16), i64, i64, i64, i64, flat(b.getF32Type()),
                    flat(word)},
                   kWarp, 0))
    return {name, spec};
  kernel->setAttr(NVVM::NVVMDialect::getMinctasmAttrName(),
                  b.getI32IntegerAttr(kDecodeBlocksPerSM));
  w.paged = pagedPoolArgs(3, 4, groupLayers, kvHeads * hd);
  w.bytes = poolBytes(w.paged, 2);
  SplitAttentionBlock blk = splitAttentionBlock(true);
  Value t = blk.token;
  w.kvh = blk.kvh;
  w.g = divu(blk.lane, 4);
  w.c = remu(blk.lane, 4);
  Value p = toIndex(load(blk.positions, t));
  w.tableRow = mul(load(blk.seqs, t), w.bytes.width);
  auto [lo, hi] = splitKeys(window, p, blk.splits, blk.split);
  w.lo = toI32(lo);
  w.hi = toI32(hi);
  Value firstHead = mul(w.kvh, index(w.group));
  SmallVector<SmallVector<Value>> qFrag = decodeQueryFragments(w, blk.q, t, firstHead, qStride);

  Value bs = w.bytes.blockSize;
  Value g = toI32(w.g), twoC = mul(toI32(w.c), i32(2));
  w.offsets = {g,
               add(g, i32(8)),
               twoC,
               add(twoC, i32(1)),
               add(twoC, i32(8)),
               add(twoC, i32(9))};
  for (Value off : w.offsets)
    std::tie(w.offBlocks.emplace_back(), w.offSlots.emplace_back()) =
        cursorOf(off, bs);
  // K: features c hd/4 + [0, hd/4) of keys g and 8 + g; V: g hd/8 + [0, hd/8)
  // of the others, both in the block's KV head.
  Value headBytes = mul(toI32(w.kvh), i32(hd * 2));
  Value kInRow = add(headBytes, mul(toI32(w.c), i32(hd / 4 * 2)));
  Value vInRow = add(headBytes, mul(g, i32(hd / 8 * 2)));
  w.inRows = {kInRow, kInRow, vInRow, vInRow, vInRow, vInRow};
  std::tie(w.stepBlocks, w.stepSlots) = cursorOf(i32(kDecodeKeyTile), bs);
  std::tie(w.lastBlock, w.lastSlot) = cursorOf(toI32(p), bs);
  // The loop carries m[2], l[2] and O of this lane's rows g and g + 8, the
  // tile's cursor and its words (loaded one iteration ahead).
  Value minusInf = f32(-std::numeric_limits<float>::infinity());
  SmallVector<Value> init = {minusInf, minusInf, f32(0), f32(0)};
  init.append(hd / 8 * 4, f32(0));
  size_t stateSize = init.size();
  auto [tb, ts] = cursorOf(w.lo, bs);
  init.append({tb, ts});
  llvm::append_range(init, decodeTileWords(w, w.lo, tb, ts));
  auto loop = scf::ForOp::create(b, w.lo, w.hi, i32(kDecodeKeyTile), init);
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToEnd(loop.getBody());
    Value j0 = loop.getInductionVar();
    ValueRange carried = loop.getRegionIterArgs();
    auto [nextTb, nextTs] = addToCursor(carried[stateSize], carried[stateSize + 1],
                                        w.stepBlocks, w.stepSlots, bs);
    SmallVector<Value> nextWords =
        decodeTileWords(w, add(j0, i32(kDecodeKeyTile)), nextTb, nextTs);
    SmallVector<Value> current(carried.drop_front(stateSize + 2));
    SmallVector<Value> next =
        decodeTileUpdate(w, qFrag, current, j0, carried.take_front(stateSize));
    next.append({nextTb, nextTs});
    next.append(nextWords);
    scf::YieldOp::create(b, next);
  }
  decodeStoreWarp(w, loop.getResults().take_front(stateSize),
                  AttentionOutput{blk.out, blk.partial, t, blk.row, blk.split, blk.splits,
                                  firstHead, heads, hd});
  endKernel();
  return {name, spec};
}

SmallVector<SmallVector<Value>> KernelGenerator::decodeQueryFragments(const DecodeWarp &w,
                                                                      Value q, Value t,
                                                                      Value firstHead,
                                                                      int64_t qStride) {
  // Register reg of fragment ks: row (head of the group) g + 8 (reg % 2),
  // features c hd/4 + 4 ks + 2 (reg / 2) + {0, 1}; rows past the group 0.
  Value zero = arith::ConstantIntOp::create(b, 0, 32);
  SmallVector<SmallVector<Value>> qFrag;
  for (int64_t ks = 0; ks < w.hd / 16; ++ks) {
    qFrag.emplace_back();
    for (int64_t reg = 0; reg < 4; ++reg) {
      int64_t r = reg % 2;
      if (8 * r >= w.group) {
        qFrag.back().push_back(zero);
        continue;
      }
      Value head = add(w.g, index(8 * r));
      Value inGroup = cmp(arith::CmpIPredicate::ult, head, index(w.group));
      Value f = add(mul(w.c, index(w.hd / 4)), index(ks * 4 + (reg / 2) * 2));
      Value h = add(firstHead, arith::SelectOp::create(b, inGroup, head, index(0)));
      Value at = add(mul(t, index(qStride)), add(mul(h, index(w.hd)), f));
      Value word = packF32(load(q, at), load(q, add(at, index(1))));
      qFrag.back().push_back(arith::SelectOp::create(b, inGroup, word, zero));
    }
  }
  return qFrag;
}

SmallVector<Value> KernelGenerator::decodeTileWords(const DecodeWarp &w, Value j0, Value tb,
                                                    Value ts) {
  SmallVector<Value> words;
  for (size_t i = 0; i < w.offsets.size(); ++i) {
    auto [tableIndex, slot] =
        addToCursor(tb, ts, w.offBlocks[i], w.offSlots[i], w.bytes.blockSize);
    // A key past the warp's reads the token's own row (always written) and weighs nothing.
    Value valid = cmp(arith::CmpIPredicate::ult, add(j0, w.offsets[i]), w.hi);
    tableIndex = arith::SelectOp::create(b, valid, tableIndex, w.lastBlock);
    slot = arith::SelectOp::create(b, valid, slot, w.lastSlot);
    Value block = tableBlock32(w.paged, w.tableRow, tableIndex);
    int64_t kv = i < 2 ? 0 : 1;
    Value address = kvRowAddress(w.bytes, block, slot, kv, w.inRows[i]);
    llvm::append_range(words, wordsAt(address, kv == 0 ? w.hd / 8 : w.hd / 16));
  }
  return words;
}

SmallVector<Value> KernelGenerator::decodeTileUpdate(const DecodeWarp &w,
                                                     ArrayRef<SmallVector<Value>> qFrag,
                                                     ArrayRef<Value> words, Value j0,
                                                     ValueRange state) {
  int64_t kWords = w.hd / 8, vWords = w.hd / 16;
  Value scale = f32(M_LOG2E / std::sqrt((double)w.hd));
  Value minusInf = f32(-std::numeric_limits<float>::infinity());
  // S for keys j0 + 8 nb + [0, 8): this lane's B column is key 8 nb + g, its
  // C columns keys 8 nb + 2c + {0, 1}; keys from hi on weigh nothing.
  SmallVector<SmallVector<Value>> sTile;
  for (int64_t nb = 0; nb < 2; ++nb) {
    ArrayRef<Value> kw = words.slice(nb * kWords, kWords);
    SmallVector<Value> acc(4, f32(0));
    for (int64_t ks = 0; ks < w.hd / 16; ++ks)
      acc = mma(qFrag[ks], {kw[2 * ks], kw[2 * ks + 1]}, acc);
    for (int64_t i = 0; i < 4; ++i) {
      Value j =
          add(j0, add(i32(nb * 8 + i % 2), w.offsets[2])); // offsets[2] = 2c
      acc[i] = arith::SelectOp::create(b, cmp(arith::CmpIPredicate::ult, j, w.hi),
                                       mulf(acc[i], scale), minusInf);
    }
    sTile.push_back(acc);
  }
  SmallVector<Value> next = softmaxTileUpdate(state, sTile, /*log2Scale=*/1.0);
  // Keys 16 kk + 2c + {0, 1, 8, 9} of P (kk = 0, one tile of 16) are this
  // lane's V words 0 to 3; V's columns are permuted as K's rows are (column
  // n of feature tile fb is feature n hd/8 + fb, lane g reading hd/8
  // contiguous features of a key): features fb = 2i and 2i + 1 come from the
  // low and high halves of its word i.
  ArrayRef<Value> vw = words.drop_front(2 * kWords);
  accumulatePV(
      sTile,
      [&](int64_t) {
        SmallVector<Value> fragments;
        for (int64_t fb = 0; fb < w.hd / 8; ++fb) {
          auto halves = [&](int64_t key) {
            Value lo = vw[key * vWords + fb / 2],
                  hi = vw[(key + 1) * vWords + fb / 2];
            return fb % 2 == 0 ? lowHalves(lo, hi) : highHalves(lo, hi);
          };
          fragments.push_back(halves(0));
          fragments.push_back(halves(2));
        }
        return fragments;
      },
      MutableArrayRef<Value>(next).drop_front(4));
  return next;
}

void KernelGenerator::decodeStoreWarp(const DecodeWarp &w, ValueRange state,
                                      const AttentionOutput &output) {
  // Column 2c + j of feature tile fb is feature (2c + j) hd/8 + fb: a lane
  // holds features (2c + j) hd/8 + [0, hd/8) of each of its rows, in order.
  int64_t run = w.hd / 8, unit = std::min<int64_t>(run, 8);
  int64_t rows = w.group > 8 ? 2 : 1;
  // l over each row's four lanes (each summed its own columns), by every
  // lane; m is the row's already.
  SmallVector<Value> l, head, inGroup;
  for (int64_t r = 0; r < rows; ++r) {
    Value sum = state[2 + r];
    sum = addf(sum, xorShuffle(sum, 1));
    l.push_back(addf(sum, xorShuffle(sum, 2)));
    head.push_back(add(w.g, index(8 * r)));
    inGroup.push_back(cmp(arith::CmpIPredicate::ult, head[r], index(w.group)));
  }
  auto o = [&](int64_t r, int64_t j, int64_t fb) {
    return state[4 + fb * 4 + r * 2 + j];
  };
  auto firstFeature = [&](int64_t j) {
    return mul(add(mul(w.c, index(2)), index(j)), index(run));
  };
  auto whole = scf::IfOp::create(
      b, cmp(arith::CmpIPredicate::eq, output.splits, index(1)),
      /*withElseRegion=*/true);
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPoint(whole.thenBlock()->getTerminator());
  for (int64_t r = 0; r < rows; ++r)
    ifThen(inGroup[r], [&] {
      Value inverse = arith::DivFOp::create(b, f32(1), l[r]);
      Value rowBase = mul(add(mul(output.token, index(output.heads)),
                              add(output.firstHead, head[r])),
                          index(w.hd));
      for (int64_t j = 0; j < 2; ++j) {
        Value first = add(rowBase, firstFeature(j));
        for (int64_t u = 0; u < run; u += unit) {
          SmallVector<Value> values;
          for (int64_t fb = u; fb < u + unit; ++fb)
            values.push_back(mulf(o(r, j, fb), inverse));
          storeUnit(values, output.out, add(first, index(u)));
        }
      }
    });
  b.setInsertionPoint(whole.elseBlock()->getTerminator());
  for (int64_t r = 0; r < rows; ++r)
    ifThen(inGroup[r], [&] {
      for (int64_t fb = 0; fb < run; ++fb)
        for (int64_t j = 0; j < 2; ++j) {
          Value feature = add(firstFeature(j), index(fb));
          storeAttentionPartial(output, head[r], feature, state[r], l[r],
                                o(r, j, fb));
        }
    });
}

} // namespace mlir::cohere2c::attn_to_gpu
