//===- RowKernels.cpp - kernels over rows of activations --------------------===//

#include "Conversion/AttnToGPU/KernelGenerator.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"

#include <limits>

namespace mlir::cohere2c::attn_to_gpu {

// out[t, :] = table[ids[t], :]; a block per (token, chunk).
KernelGenerator::Kernel KernelGenerator::embeddingKernel(Type table, Type result,
                                             int64_t hidden) {
  std::string name = sanitize("embedding_" + std::to_string(hidden));
  KernelSpec spec{KernelFamily::Embedding};
  if (!beginKernel(name, {flat(b.getI32Type()), flat(table), flat(result)},
                   kChunkThreads, 0))
    return {name, spec};
  Value ids = kernel.getArgument(0), weights = kernel.getArgument(1),
        out = kernel.getArgument(2);
  Value t = gpu::BlockIdOp::create(b, gpu::Dimension::x);
  Value row = toIndex(load(ids, t));
  forChunkElement(hidden, [&](Value d) {
    store(load(weights, add(mul(row, index(hidden)), d)), out,
          add(mul(t, index(hidden)), d));
  });
  endKernel();
  return {name, spec};
}

// Cohere LayerNorm, statistics in f32; one block per row, held in registers.
KernelGenerator::Kernel KernelGenerator::layerNormKernel(Type input, Type e, int64_t hidden,
                                             double eps) {
  std::string name = sanitize("layer_norm_" + std::to_string(hidden) + "_eps" +
                              std::to_string(eps));
  KernelSpec spec{KernelFamily::LayerNorm};
  if (!beginKernel(name, {flat(input), flat(e), flat(e)}, rowThreads(hidden),
                   kReduceScratch))
    return {name, spec};
  Value in = kernel.getArgument(0), w = kernel.getArgument(1), out = kernel.getArgument(2);
  Value t = gpu::BlockIdOp::create(b, gpu::Dimension::x);
  Value rowBase = mul(t, index(hidden));
  storeRow(emitLayerNorm(in, w, rowBase, hidden, eps), out, rowBase);
  endKernel();
  return {name, spec};
}

/// The normalized row at rowBase, in f32 registers: (x - mean) / sqrt(var + eps) * w.
SmallVector<KernelGenerator::RowPair>
KernelGenerator::emitLayerNorm(Value in, Value w, Value rowBase, int64_t hidden, double eps) {
  SmallVector<RowPair> row = loadRow(hidden, [&](Value d) { return load(in, add(rowBase, d)); });
  Value n = f32(hidden);
  Value mean = arith::DivFOp::create(b, reduceRow(row, [&](Value x, Value y) { return addf(x, y); }), n);
  SmallVector<RowPair> centered = mapRow(row, [&](Value x, Value) { return subf(x, mean); });
  Value var = arith::DivFOp::create(
      b,
      reduceRow(mapRow(centered, [&](Value x, Value) { return mulf(x, x); }),
                [&](Value x, Value y) { return addf(x, y); }),
      n);
  Value rstd = math::RsqrtOp::create(b, addf(var, f32(eps)));
  return mapRow(centered, [&](Value x, Value d) { return mulf(mulf(x, rstd), load(w, d)); });
}

// Per-token FP8 quantization of a row; one block per row.
KernelGenerator::Kernel KernelGenerator::quantizeKernel(Type input, int64_t width) {
  std::string name = sanitize("quantize_fp8_" + std::to_string(width));
  KernelSpec spec{KernelFamily::QuantizeFP8};
  if (!beginKernel(name, {flat(input), flat(b.getI16Type()), flat(b.getF32Type())},
                   rowThreads(width), kReduceScratch))
    return {name, spec};
  Value in = kernel.getArgument(0);
  Value t = gpu::BlockIdOp::create(b, gpu::Dimension::x);
  Value rowBase = mul(t, index(width));
  emitRowQuantize(t, width, loadRow(width, [&](Value d) { return load(in, add(rowBase, d)); }),
                  kernel.getArgument(1), kernel.getArgument(2));
  endKernel();
  return {name, spec};
}

// LayerNorm and the FP8 quantization of its output in one kernel: the
// normalized row stays in f32 registers and is quantized from there, as the
// recipe quantizes the exact value (a bf16 rounding first, as an unfused
// norm would store it, adds error the recipe does not ask for).
KernelGenerator::Kernel KernelGenerator::layerNormQuantKernel(Type input, Type normType,
                                                  int64_t hidden, double eps) {
  std::string name = sanitize("layer_norm_quant_fp8_" + std::to_string(hidden) + "_eps" +
                              std::to_string(eps));
  KernelSpec spec{KernelFamily::LayerNormQuantFP8};
  if (!beginKernel(name, {flat(input), flat(normType), flat(b.getI16Type()),
                          flat(b.getF32Type())},
                   rowThreads(hidden), kReduceScratch))
    return {name, spec};
  Value in = kernel.getArgument(0), w = kernel.getArgument(1);
  Value t = gpu::BlockIdOp::create(b, gpu::Dimension::x);
  Value rowBase = mul(t, index(hidden));
  emitRowQuantize(t, hidden, emitLayerNorm(in, w, rowBase, hidden, eps), kernel.getArgument(2),
                  kernel.getArgument(3));
  endKernel();
  return {name, spec};
}

// SwiGLU and the FP8 quantization of its output in one kernel, quantized
// from the f32 product (not rounded to the gate's type first). With `unit` >
// 2 a thread loads that many consecutive gate and up values at once (16-byte
// loads; the caller checked the alignment): one value a load left the kernel
// at a third of the memory bandwidth.
KernelGenerator::Kernel
KernelGenerator::swigluQuantKernel(Type e, int64_t width, int64_t gateStride,
                                   int64_t upStride, int64_t unit) {
  std::string name =
      sanitize("swiglu_quant_fp8_" + std::to_string(width) +
               strideSuffix("gate", gateStride, width) +
               strideSuffix("up", upStride, width) + unitSuffix(unit));
  KernelSpec spec{KernelFamily::SwiGLUQuantFP8};
  spec.strides = {gateStride, upStride, 0};
  if (!beginKernel(
          name, {flat(e), flat(e), flat(b.getI16Type()), flat(b.getF32Type())},
          unitRowThreads(width, unit), kReduceScratch))
    return {name, spec};
  Value gate = kernel.getArgument(0), up = kernel.getArgument(1);
  Value t = gpu::BlockIdOp::create(b, gpu::Dimension::x);
  Value gateRow = mul(t, index(gateStride)), upRow = mul(t, index(upStride));
  // Pairs (unit 2) may be unaligned for a 4-byte load: one value a load.
  auto values = [&](Value mem, Value at) -> SmallVector<Value> {
    if (unit > 2)
      return loadUnit(mem, at, unit);
    return {load(mem, at), load(mem, add(at, index(1)))};
  };
  SmallVector<RowPair> row = loadRowUnits(width, unit, [&](Value u) {
    Value d = mul(u, index(unit));
    SmallVector<Value> g = values(gate, add(gateRow, d)),
                       upValues = values(up, add(upRow, d)), product;
    for (int64_t j = 0; j < unit; ++j)
      product.push_back(mulf(silu(g[j]), upValues[j]));
    return product;
  });
  emitRowQuantize(t, width, row, kernel.getArgument(2), kernel.getArgument(3),
                  unit / 2);
  endKernel();
  return {name, spec};
}

// swigluQuantKernel for a step of one token (decode at batch 1). One block
// left one SM to do all of a row's SwiGLUs and quantization (16 us a layer
// on Command A, with 36,864 values, where reading them takes far less);
// here block y owns values [y slice, (y + 1) slice) and the row's amax is
// taken over the blocks (gridMax). The gate and up rows are row 0 of their
// buffers: the strides are the spec's, not used.
KernelGenerator::Kernel KernelGenerator::swigluQuantTokenKernel(Type e, int64_t width,
                                                                int64_t gateStride,
                                                                int64_t upStride,
                                                                int64_t blocks) {
  std::string name = sanitize("swiglu_quant_fp8_token_" + std::to_string(width) +
                              strideSuffix("gate", gateStride, width) +
                              strideSuffix("up", upStride, width) + "_blocks" +
                              std::to_string(blocks));
  KernelSpec spec{KernelFamily::SwiGLUQuantFP8};
  spec.strides = {gateStride, upStride, 0};
  spec.gridSync = true;
  int64_t slice = width / blocks;
  if (!beginKernel(name, {flat(e), flat(e), flat(b.getI16Type()), flat(b.getF32Type())},
                   tokenRowThreads(width, blocks), kReduceScratch))
    return {name, spec};
  Value gate = kernel.getArgument(0), up = kernel.getArgument(1);
  Value block = gpu::BlockIdOp::create(b, gpu::Dimension::y);
  Value first = mul(block, index(slice));
  SmallVector<RowPair> row = loadRow(slice, [&](Value d) {
    Value i = add(first, d);
    return mulf(silu(load(gate, i)), load(up, i));
  });
  Value amax = gridMax(rowAbsMax(row), blocks);
  Value storesScale = andi(cmp(arith::CmpIPredicate::eq, threadId, index(0)),
                           cmp(arith::CmpIPredicate::eq, block, index(0)));
  emitQuantize(index(0), width, row, amax, divu(first, 2), storesScale, kernel.getArgument(2),
               kernel.getArgument(3));
  endKernel();
  return {name, spec};
}

// silu(g) * u; a block per (row, chunk of kChunkThreads units), a thread
// per unit of `unit` consecutive values (16-byte loads and stores where the
// caller found them aligned, else 1).
KernelGenerator::Kernel KernelGenerator::swigluKernel(Type e, int64_t width,
                                                      int64_t gateStride,
                                                      int64_t upStride,
                                                      int64_t unit) {
  std::string name =
      sanitize("swiglu_" + std::to_string(width) +
               strideSuffix("gate", gateStride, width) +
               strideSuffix("up", upStride, width) + unitSuffix(unit));
  KernelSpec spec{KernelFamily::SwiGLU};
  spec.strides = {gateStride, upStride, 0};
  if (!beginKernel(name, {flat(e), flat(e), flat(e)}, kChunkThreads, 0))
    return {name, spec};
  Value gate = kernel.getArgument(0), up = kernel.getArgument(1), out = kernel.getArgument(2);
  Value t = gpu::BlockIdOp::create(b, gpu::Dimension::x);
  forChunkElement(width / unit, [&](Value u) {
    Value d = mul(u, index(unit));
    SmallVector<Value> g = loadUnit(gate, add(mul(t, index(gateStride)), d),
                                    unit),
                       upValues =
                           loadUnit(up, add(mul(t, index(upStride)), d), unit),
                       product;
    for (int64_t j = 0; j < unit; ++j)
      product.push_back(mulf(silu(g[j]), upValues[j]));
    storeUnit(product, out, add(mul(t, index(width)), d));
  });
  endKernel();
  return {name, spec};
}

// The parallel block's residual: out = x + attention + mlp; a block per
// (row, chunk).
KernelGenerator::Kernel KernelGenerator::residualKernel(TypeRange inputs, Type result,
                                            int64_t width) {
  std::string name = sanitize("residual_sum" + std::to_string(inputs.size()) + "_" +
                              std::to_string(width));
  KernelSpec spec{KernelFamily::ResidualSum};
  SmallVector<Type> args;
  for (Type t : inputs)
    args.push_back(flat(t));
  args.push_back(flat(result));
  if (!beginKernel(name, args, kChunkThreads, 0))
    return {name, spec};
  Value row = mul(gpu::BlockIdOp::create(b, gpu::Dimension::x), index(width));
  forChunkElement(width, [&](Value d) {
    Value i = add(row, d);
    Value sum = load(kernel.getArgument(0), i);
    for (size_t a = 1; a < inputs.size(); ++a)
      sum = addf(sum, load(kernel.getArgument(a), i));
    store(sum, kernel.getArgument(inputs.size()), i);
  });
  endKernel();
  return {name, spec};
}

// out[r, :] = in[rows[r], :]: the rows whose logits are wanted; a block per
// (row, chunk).
KernelGenerator::Kernel KernelGenerator::gatherRowsKernel(Type e, int64_t width) {
  std::string name = sanitize("gather_rows_" + std::to_string(width));
  KernelSpec spec{KernelFamily::GatherRows};
  if (!beginKernel(name, {flat(e), flat(b.getI32Type()), flat(e)}, kChunkThreads, 0))
    return {name, spec};
  Value in = kernel.getArgument(0), rows = kernel.getArgument(1), out = kernel.getArgument(2);
  Value r = gpu::BlockIdOp::create(b, gpu::Dimension::x);
  Value t = toIndex(load(rows, r));
  forChunkElement(width, [&](Value d) {
    memref::StoreOp::create(
        b, memref::LoadOp::create(b, in, ValueRange{add(mul(t, index(width)), d)}), out,
        ValueRange{add(mul(r, index(width)), d)});
  });
  endKernel();
  return {name, spec};
}

// The token of each logits row (a block per row): the first index of the
// largest score, the logit itself where the row's temperature T is 0
// (greedy), else gumbelScore (lib/Artifact/GumbelNoise.h: logit / T plus
// the row's seeded Gumbel noise); -1 where a logit is NaN or infinite. The
// engine's greedyToken and gumbelMaxToken (runtime Sampler.h) on the GPU,
// so that a batch copies R tokens to the host instead of R x vocab logits.
// Thread t of N reads units (4 values where vocab allows 16-byte loads, else
// 1) t, t + N, t + 2N, ... in rounds of a few loads, so its indices
// only grow and a strict > keeps the first maximum; warps and then the
// block combine (score, index) pairs, ties to the lower index.
KernelGenerator::Kernel KernelGenerator::sampleTokensKernel(int64_t vocab) {
  std::string name = sanitize("sample_tokens_" + std::to_string(vocab));
  KernelSpec spec{KernelFamily::SampleTokens};
  Type i32 = b.getI32Type(), f32t = b.getF32Type(), i64 = b.getI64Type();
  int64_t perUnit = vocab % 4 == 0 ? 4 : 1, units = vocab / perUnit;
  Type unitType = perUnit == 4 ? Type(VectorType::get({4}, f32t)) : f32t;
  if (!beginKernel(name, {flat(unitType), flat(f32t), flat(i64), flat(i32)},
                   kSampleThreads, 3 * kReduceScratch))
    return {name, spec};
  Value logits = kernel.getArgument(0), tokens = kernel.getArgument(3);
  Value row = gpu::BlockIdOp::create(b, gpu::Dimension::x);
  Value rowBase = mul(row, index(units));
  Value temperature =
      memref::LoadOp::create(b, kernel.getArgument(1), ValueRange{row});
  Value seed =
      memref::LoadOp::create(b, kernel.getArgument(2), ValueRange{row});
  Value sampled =
      arith::CmpFOp::create(b, arith::CmpFPredicate::OGT, temperature, f32(0));
  Value inverseT = arith::DivFOp::create(
      b, f64(1.0), arith::ExtFOp::create(b, b.getF64Type(), temperature));
  // Logit v at `element`: its Gumbel score, or v itself (greedy).
  auto score = [&](Value v, Value element, bool noisy) {
    if (!noisy)
      return v;
    Value noise =
        gumbelNoise(seed, arith::IndexCastOp::create(b, i64, element));
    Value fused = math::FmaOp::create(
        b, arith::ExtFOp::create(b, b.getF64Type(), v), inverseT, noise);
    return arith::TruncFOp::create(b, f32t, fused).getResult();
  };
  Value negInf = f32(-std::numeric_limits<double>::infinity());
  auto i32c = [&](int32_t v) { return arith::ConstantIntOp::create(b, v, 32).getResult(); };
  auto cmpf = [&](arith::CmpFPredicate p, Value x, Value y) {
    return arith::CmpFOp::create(b, p, x, y).getResult();
  };
  // The pair (value, index) of `other` replaces (best, at) if larger, or
  // equal at a lower index; checks add up (NaN once any value is not finite).
  struct Best {
    Value value, at, check;
  };
  auto combine = [&](Best x, Best other) {
    Value take = arith::OrIOp::create(
        b, cmpf(arith::CmpFPredicate::OGT, other.value, x.value),
        arith::AndIOp::create(
            b, cmpf(arith::CmpFPredicate::OEQ, other.value, x.value),
            arith::CmpIOp::create(b, arith::CmpIPredicate::slt, other.at, x.at)));
    return Best{arith::SelectOp::create(b, take, other.value, x.value),
                arith::SelectOp::create(b, take, other.at, x.at), addf(x.check, other.check)};
  };
  // A thread's (best, at, check) over its units: one loop for sampled rows
  // and one for greedy rows, chosen once per block, so that greedy rows
  // cost what they did before sampling. Sampled rows compute far more per
  // unit (two f64 logarithms a value) and keep fewer loads in flight,
  // within the registers.
  auto scan = [&](bool noisy) {
    int64_t loads = noisy ? kSampledRowLoads : kGreedyRowLoads,
            round = kSampleThreads * loads;
    auto loop = scf::ForOp::create(b, index(0), index(units), index(round),
                                   ValueRange{negInf, i32c(0), f32(0)});
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToEnd(loop.getBody());
    Value best = loop.getRegionIterArg(0), at = loop.getRegionIterArg(1),
          check = loop.getRegionIterArg(2);
    SmallVector<Value> positions, inside, loaded;
    for (int64_t u = 0; u < loads; ++u) { // every load first
      Value i =
          add(loop.getInductionVar(), add(index(u * kSampleThreads), threadId));
      inside.push_back(arith::CmpIOp::create(b, arith::CmpIPredicate::ult, i, index(units)));
      positions.push_back(i);
      loaded.push_back(memref::LoadOp::create(
          b, logits, ValueRange{add(rowBase, arith::SelectOp::create(b, inside[u], i, index(0)))}));
    }
    for (int64_t u = 0; u < loads; ++u) {
      for (int64_t e = 0; e < perUnit; ++e) {
        Value v = perUnit == 1 ? loaded[u]
                               : LLVM::ExtractElementOp::create(
                                     b, loaded[u],
                                     arith::ConstantIntOp::create(b, e, 32))
                                     .getResult();
        Value element = add(mul(positions[u], index(perUnit)), index(e));
        Value s = score(v, element, noisy);
        Value larger = arith::AndIOp::create(
            b, inside[u], cmpf(arith::CmpFPredicate::OGT, s, best));
        best = arith::SelectOp::create(b, larger, s, best);
        at = arith::SelectOp::create(b, larger, arith::IndexCastOp::create(b, i32, element), at);
        check = addf(check, arith::SelectOp::create(b, inside[u], mulf(v, f32(0)), f32(0)));
      }
    }
    scf::YieldOp::create(b, ValueRange{best, at, check});
    return loop.getResults();
  };
  auto rowScan = scf::IfOp::create(b, TypeRange{f32t, i32, f32t}, sampled,
                                   /*withElseRegion=*/true);
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(rowScan.thenBlock());
    scf::YieldOp::create(b, scan(true));
    b.setInsertionPointToStart(rowScan.elseBlock());
    scf::YieldOp::create(b, scan(false));
  }
  Best mine{rowScan.getResult(0), rowScan.getResult(1), rowScan.getResult(2)};
  for (int32_t offset = kWarp / 2; offset > 0; offset /= 2) {
    auto shuffle = [&](Value v) {
      return gpu::ShuffleOp::create(b, v, offset, kWarp, gpu::ShuffleMode::XOR)
          .getShuffleResult();
    };
    mine = combine(mine, Best{shuffle(mine.value), shuffle(mine.at), shuffle(mine.check)});
  }
  Value warp = arith::DivUIOp::create(b, threadId, index(kWarp));
  Value lane = arith::RemUIOp::create(b, threadId, index(kWarp));
  ifThen(arith::CmpIOp::create(b, arith::CmpIPredicate::eq, lane, index(0)), [&] {
    memref::StoreOp::create(b, mine.value, scratch, ValueRange{warp});
    memref::StoreOp::create(b, arith::BitcastOp::create(b, f32t, mine.at), scratch,
                            ValueRange{add(warp, index(kReduceScratch))});
    memref::StoreOp::create(b, mine.check, scratch,
                            ValueRange{add(warp, index(2 * kReduceScratch))});
  });
  gpu::BarrierOp::create(b);
  ifThen(arith::CmpIOp::create(b, arith::CmpIPredicate::eq, threadId, index(0)), [&] {
    auto warpBest = [&](int64_t w) {
      return Best{memref::LoadOp::create(b, scratch, ValueRange{index(w)}),
                  arith::BitcastOp::create(
                      b, i32,
                      memref::LoadOp::create(b, scratch, ValueRange{index(w + kReduceScratch)})),
                  memref::LoadOp::create(b, scratch, ValueRange{index(w + 2 * kReduceScratch)})};
    };
    Best all = warpBest(0);
    for (int64_t w = 1; w < kSampleThreads / kWarp; ++w)
      all = combine(all, warpBest(w));
    Value finite = cmpf(arith::CmpFPredicate::OEQ, all.check, f32(0));
    memref::StoreOp::create(b, arith::SelectOp::create(b, finite, all.at, i32c(-1)), tokens,
                            ValueRange{gpu::BlockIdOp::create(b, gpu::Dimension::x)});
  });
  endKernel();
  return {name, spec};
}

} // namespace mlir::cohere2c::attn_to_gpu
