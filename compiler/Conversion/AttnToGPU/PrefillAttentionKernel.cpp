//===- PrefillAttentionKernel.cpp - prefill attention on tensor cores -----===//

#include "Conversion/AttnToGPU/KernelGenerator.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"

#include <cmath>
#include <limits>

namespace mlir::cohere2c::attn_to_gpu {

// Prefill attention on tensor cores, as in FlashAttention-2 (Dao, 2023): a
// block per (tile of kPrefillTileTokens tokens, KV head), a warp per query
// head of that KV head's group, so the group's warps read the same keys.
// A warp holds its 16 query rows (rotated on RoPE layers by kvAppendKernel,
// rounded to bf16) as mma A fragments and walks the keys kPrefillKeyTile at
// a time:
// S = Q K^T and O += P V by mma.sync.m16n8k16 (bf16 operands, f32
// accumulators), with an online softmax per row in registers, in base 2
// (ex2.approx.ftz; the 1 / sqrt(hd) scale folded into the exponent's fma). The
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
KernelGenerator::Kernel
KernelGenerator::prefillAttentionKernel(attn::AttentionOp op,
                                        int64_t groupLayers, int64_t qStride) {
  PrefillBlock k;
  k.window = op.getSlidingWindow();
  k.heads = op.getNumHeads();
  k.hd = op.getHeadDim();
  int64_t kvHeads = op.getNumKvHeads(), group = k.heads / kvHeads;
  k.qStride = qStride;
  std::string name = sanitize(
      "attention_prefill_" +
      (k.window ? "sliding" + std::to_string(*k.window) : std::string("full")) +
      "_h" + std::to_string(k.heads) + "_kv" + std::to_string(kvHeads) + "_d" +
      std::to_string(k.hd) + "_l" + std::to_string(groupLayers) +
      strideSuffix("q", qStride, k.heads * k.hd));
  KernelSpec spec{KernelFamily::AttentionPrefill};
  spec.rows = KernelRows::Prompt;
  spec.window = k.window.value_or(0);
  spec.strides = {qStride, 0, 0};
  Type bf16 = b.getBF16Type(), word = b.getI32Type(), i64 = b.getI64Type();
  // q, positions, seqs, tables, pool (as 16-byte vectors of bf16 pairs),
  // out, slot, block_size, table_width, tokens, splits, partial (f32),
  // generated
  Type quad = VectorType::get({4}, word);
  k.threads = group * kWarp;
  if (!beginKernel(name,
                   {flat(bf16), flat(word), flat(word), flat(word), flat(quad),
                    flat(bf16), i64, i64, i64, i64, i64, flat(b.getF32Type()),
                    flat(word)},
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
  k.bytes = poolBytes(k.paged, 2);
  Value thread = toI32(threadId);
  k.copyKey = arith::DivUIOp::create(b, thread, i32(k.keyQuads));
  Value copyUnit = arith::RemUIOp::create(b, thread, i32(k.keyQuads));
  for (auto [step, keys] : {std::pair(k.roundStep, k.keysPerRound()),
                            std::pair(k.tileStep, kPrefillKeyTile)}) {
    std::tie(step[0], step[1]) = cursorOf(i32(keys), k.bytes.blockSize);
  }
  prefillLaneRows(k, group, tokens);
  Value headBytes = mul(toI32(k.kvh), i32(k.hd * 2));
  k.copyInRow = add(headBytes, mul(copyUnit, i32(16)));
  k.copyTo = add(k.tileAddress,
                 mul(add(mul(k.copyKey, i32(k.rowQuads)), copyUnit), i32(16)));
  prefillStoreResult(k, prefillRuns(k, prefillQueryFragments(k)));
  endKernel();
  return {name, spec};
}

void KernelGenerator::prefillLaneRows(PrefillBlock &k, int64_t group,
                                      Value tokens) {
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
  k.rowsInTile =
      arith::MinUIOp::create(b, arith::SubIOp::create(b, tokens, k.tileBase),
                             index(kPrefillTileTokens));
  // This lane's rows of the tile: g and g + 8. A row past the step's
  // tokens reads row 0 of the tile; it and a generated token's row are
  // computed as no key's and not stored.
  for (int r = 0; r < 2; ++r) {
    k.row[r] = add(k.g, index(8 * r));
    k.valid[r] = cmp(arith::CmpIPredicate::ult, k.row[r], k.rowsInTile);
    k.token[r] = add(
        k.tileBase, arith::SelectOp::create(b, k.valid[r], k.row[r], index(0)));
    k.pos[r] = toIndex(load(k.positions, k.token[r]));
    Value flag = memref::LoadOp::create(b, k.generated, ValueRange{k.token[r]});
    k.valid[r] = andi(k.valid[r], cmp(arith::CmpIPredicate::eq, flag,
                                      arith::ConstantIntOp::create(b, 0, 32)));
  }
}

SmallVector<SmallVector<Value>>
KernelGenerator::prefillQueryFragments(const PrefillBlock &k) {
  SmallVector<SmallVector<Value>> qFrag;
  for (int64_t ks = 0; ks < k.hd / 16; ++ks) {
    qFrag.emplace_back();
    for (int64_t reg = 0; reg < 4; ++reg) {
      int r = reg % 2;
      Value f = add(mul(k.c, index(2)), index(ks * 16 + (reg / 2) * 8));
      Value at =
          add(mul(k.token[r], index(k.qStride)), add(mul(k.h, index(k.hd)), f));
      qFrag.back().push_back(
          packF32(load(k.q, at), load(k.q, add(at, index(1)))));
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
  auto runs = scf::WhileOp::create(b, ValueRange(init).getTypes(), init,
                                   nullptr, nullptr);
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToEnd(runs.getBeforeBody());
    Value more = cmp(arith::CmpIPredicate::ult, runs.getBeforeArguments()[0],
                     k.rowsInTile);
    scf::ConditionOp::create(b, more, runs.getBeforeArguments());
  }
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToEnd(runs.getAfterBody());
  PrefillRun run = prefillRun(k, runs.getAfterArguments()[0]);
  SmallVector<Value> yielded = {run.end};
  llvm::append_range(
      yielded,
      prefillKeyTiles(k, run, qFrag, runs.getAfterArguments().drop_front()));
  scf::YieldOp::create(b, yielded);
  return runs.getResults().drop_front();
}

KernelGenerator::PrefillRun KernelGenerator::prefillRun(const PrefillBlock &k,
                                                        Value start) {
  // The run: rows [start, end) of one sequence, positions in [minP, maxP],
  // and whether any of them is a prompt token. A run of generated tokens
  // alone (the decode kernel's rows) walks no keys: a mixed step's tiles of
  // decode tokens hold a run per sequence, each of which would otherwise
  // read its whole context for rows that are not stored.
  auto isPrompt = [&](Value row) {
    Value flag = memref::LoadOp::create(b, k.generated,
                                        ValueRange{add(k.tileBase, row)});
    return cmp(arith::CmpIPredicate::eq, flag,
               arith::ConstantIntOp::create(b, 0, 32));
  };
  Value seq32 =
      memref::LoadOp::create(b, k.seqs, ValueRange{add(k.tileBase, start)});
  Value p0 = toIndex(load(k.positions, add(k.tileBase, start)));
  Value trueValue = arith::ConstantIntOp::create(b, 1, 1);
  auto scan = scf::ForOp::create(
      b, add(start, index(1)), k.rowsInTile, index(1),
      ValueRange{add(start, index(1)), trueValue, p0, p0, isPrompt(start)});
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToEnd(scan.getBody());
    Value i = scan.getInductionVar();
    ValueRange st = scan.getRegionIterArgs();
    Value si =
        memref::LoadOp::create(b, k.seqs, ValueRange{add(k.tileBase, i)});
    Value pi = toIndex(load(k.positions, add(k.tileBase, i)));
    Value same = andi(st[1], cmp(arith::CmpIPredicate::eq, si, seq32));
    scf::YieldOp::create(
        b,
        ValueRange{
            arith::SelectOp::create(b, same, add(i, index(1)), st[0]), same,
            arith::SelectOp::create(
                b, same, arith::MinUIOp::create(b, st[2], pi), st[2]),
            arith::SelectOp::create(
                b, same, arith::MaxUIOp::create(b, st[3], pi), st[3]),
            arith::SelectOp::create(
                b, same, arith::OrIOp::create(b, st[4], isPrompt(i)), st[4])});
  }
  PrefillRun run;
  run.end = scan.getResult(0);
  Value minP = scan.getResult(2), maxP = scan.getResult(3);
  run.tableRow = mul(seq32, k.bytes.width);
  for (int r = 0; r < 2; ++r)
    run.inRun[r] = andi(
        k.valid[r], andi(cmp(arith::CmpIPredicate::uge, k.row[r], start),
                         cmp(arith::CmpIPredicate::ult, k.row[r], run.end)));
  run.lo = index(0);
  if (k.window)
    run.lo =
        arith::MaxSIOp::create(b, index(0), add(minP, index(1 - *k.window)));
  Value hi = add(maxP, index(1));
  run.last = maxP;
  run.copyLo = toI32(run.lo);
  run.copyLast = toI32(maxP);
  std::tie(run.loCursor[0], run.loCursor[1]) =
      cursorOf(run.copyLo, k.bytes.blockSize);
  std::tie(run.lastCursor[0], run.lastCursor[1]) =
      cursorOf(run.copyLast, k.bytes.blockSize);
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
  Value runTiles = arith::CeilDivUIOp::create(
      b, arith::SubIOp::create(b, hi, firstTile), index(kPrefillKeyTile));
  Value share = mul(arith::MaxUIOp::create(
                        b, arith::CeilDivUIOp::create(b, runTiles, k.splits),
                        index(kMinPrefillSplitKeyTiles)),
                    index(kPrefillKeyTile));
  run.splitLo =
      arith::MinUIOp::create(b, add(firstTile, mul(k.split, share)), hi);
  run.splitHi = arith::SelectOp::create(
      b, scan.getResult(4),
      arith::MinUIOp::create(b, add(run.splitLo, share), hi), run.splitLo);
  return run;
}

ValueRange KernelGenerator::prefillKeyTiles(const PrefillBlock &k,
                                            const PrefillRun &run,
                                            ArrayRef<SmallVector<Value>> qFrag,
                                            ValueRange state) {
  double log2Scale = M_LOG2E / std::sqrt((double)k.hd);
  SmallVector<Value> init(state.begin(), state.end());
  int64_t stateSize = init.size();
  // Carried: the buffer holding the loop's tile, the next tile's cursor.
  SmallVector<Value> first(2);
  std::tie(first[0], first[1]) =
      cursorOf(add(toI32(run.splitLo), k.copyKey), k.bytes.blockSize);
  ifThen(cmp(arith::CmpIPredicate::ult, run.splitLo, run.splitHi),
         [&] { prefillCopyTile(k, run, run.splitLo, first, index(0)); });
  auto [nextBlock, nextSlot] = addToCursor(first[0], first[1], k.tileStep[0],
                                           k.tileStep[1], k.bytes.blockSize);
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
  auto keys = scf::ForOp::create(b, run.splitLo, run.splitHi,
                                 index(kPrefillKeyTile), init);
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
        add(k.tileAddress, toI32(mul(buffer, index(k.bufferBytes()))));
    auto rowAddress = [&](Value row, int64_t kv) {
      Value units = add(row, index(kv * kPrefillKeyTile * k.rowQuads));
      return add(bufferAddress, toI32(mul(units, index(16))));
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
                                     k.tileStep[1], k.bytes.blockSize);
    next.append({other, block, slot});
    scf::YieldOp::create(b, next);
  }
  // The next run's first copies go to buffer 0: every warp must be done
  // with this run's last tile first.
  gpu::BarrierOp::create(b);
  return keys.getResults().take_front(stateSize);
}

// Thread t copies unit t % keyQuads of keys t / keyQuads + i keysPerRound,
// so consecutive threads copy consecutive 16 bytes of a row. All of it in
// i32 but a pool block's offset (PoolBytes).
void KernelGenerator::prefillCopyTile(const PrefillBlock &k,
                                      const PrefillRun &run, Value kt,
                                      ArrayRef<Value> cursor, Value buffer) {
  Value firstKey = add(toI32(kt), k.copyKey);
  Value to = add(k.copyTo, mul(toI32(buffer), i32(k.bufferBytes())));
  Value tableIndex = cursor[0], slot = cursor[1];
  for (int64_t i = 0; i < k.copyRounds(); ++i) {
    if (i > 0)
      std::tie(tableIndex, slot) = addToCursor(
          tableIndex, slot, k.roundStep[0], k.roundStep[1], k.bytes.blockSize);
    int64_t key = i * k.keysPerRound();
    auto copy = [&] {
      Value j = add(firstKey, i32(key));
      Value below = cmp(arith::CmpIPredicate::ult, j, run.copyLo);
      Value above = cmp(arith::CmpIPredicate::ugt, j, run.copyLast);
      auto clamp = [&](Value v, int c) {
        return arith::SelectOp::create(
            b, below, run.loCursor[c],
            arith::SelectOp::create(b, above, run.lastCursor[c], v));
      };
      Value block = tableBlock32(k.paged, run.tableRow, clamp(tableIndex, 0));
      for (int64_t kv = 0; kv < 2; ++kv) {
        Value src =
            kvRowAddress(k.bytes, block, clamp(slot, 1), kv, k.copyInRow);
        Value dst =
            add(to, i32((key + kv * kPrefillKeyTile) * k.rowQuads * 16));
        NVVM::CpAsyncOp::create(b, pointerAt(dst, 3), pointerAt(src, 1), 16,
                                NVVM::LoadCacheModifierKind::CG, Value());
      }
    };
    if (key + k.keysPerRound() > kPrefillKeyTile)
      ifThen(cmp(arith::CmpIPredicate::ult, add(k.copyKey, i32(key)),
                 i32(kPrefillKeyTile)),
             copy);
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
      Value seen =
          andi(run.inRun[r], cmp(arith::CmpIPredicate::ule, j, k.pos[r]));
      if (k.window)
        seen = andi(seen, cmp(arith::CmpIPredicate::ugt,
                              add(j, index(*k.window)), k.pos[r]));
      select.push_back(arith::SelectOp::create(b, seen, flat[e], minusInf));
    }
    scf::YieldOp::create(b, select);
  }
  for (int64_t nb = 0; nb < kPrefillKeyTile / 8; ++nb)
    sTile.push_back(SmallVector<Value>(masked.getResults().slice(nb * 4, 4)));
  return sTile;
}

void KernelGenerator::prefillStoreResult(const PrefillBlock &k,
                                         ValueRange state) {
  // One split: out = O / l, l summed over the row's 4 lanes. Several: the
  // partial results m, l and O of (token, head, split).
  Value whole = cmp(arith::CmpIPredicate::eq, k.splits, index(1));
  for (int r = 0; r < 2; ++r) {
    Value l = state[2 + r];
    l = addf(l, xorShuffle(l, 1));
    l = addf(l, xorShuffle(l, 2));
    Value rowBase =
        add(mul(k.token[r], index(k.heads * k.hd)), mul(k.h, index(k.hd)));
    Value partialBase = mul(
        add(mul(add(mul(k.token[r], index(k.heads)), k.h), k.splits), k.split),
        index(k.hd + 2));
    // Column 2c + j of feature tile fb is feature 8 fb + 2c + j.
    auto feature = [&](int64_t fb, int64_t j) {
      return add(mul(k.c, index(2)), index(8 * fb + j));
    };
    ifThen(andi(k.valid[r], whole), [&] {
      for (int64_t fb = 0; fb < k.hd / 8; ++fb)
        for (int64_t j = 0; j < 2; ++j)
          store(arith::DivFOp::create(b, state[4 + fb * 4 + r * 2 + j], l),
                k.out, add(rowBase, feature(fb, j)));
    });
    ifThen(andi(k.valid[r], cmp(arith::CmpIPredicate::ne, k.splits, index(1))),
           [&] {
             for (int64_t fb = 0; fb < k.hd / 8; ++fb)
               for (int64_t j = 0; j < 2; ++j)
                 store(state[4 + fb * 4 + r * 2 + j], k.partial,
                       add(partialBase, add(index(2), feature(fb, j))));
             ifThen(cmp(arith::CmpIPredicate::eq, k.c, index(0)), [&] {
               // m in the merge's units: the scores' (raw dot products) over
               // sqrt(hd).
               store(mulf(state[r], f32(1.0 / std::sqrt((double)k.hd))),
                     k.partial, partialBase);
               store(l, k.partial, add(partialBase, index(1)));
             });
           });
  }
}

} // namespace mlir::cohere2c::attn_to_gpu
