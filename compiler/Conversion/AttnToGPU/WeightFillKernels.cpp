//===- WeightFillKernels.cpp - random weights generated on the device -----===//
//
// The seeded random weights of lib/Artifact/RandomWeights.h, bit for bit:
// the same splitmix64 stream, the same double arithmetic rounded to f32,
// then bf16 (round to nearest even) or rowwise e4m3 with the weight
// recipe's double-precision scale (quantizeRowE4M3). Sizes are arguments:
// one kernel per storage dtype serves every entry. The runtime launches
// them instead of streaming random weights from the host (CudaExecutor).
//
//===----------------------------------------------------------------------===//

#include "Conversion/AttnToGPU/KernelGenerator.h"

#include "Artifact/Precision.h"

namespace mlir::cohere2c::attn_to_gpu {

namespace {
constexpr int64_t kFillThreads = 256;
} // namespace

Value KernelGenerator::randomWeight(Value seed, Value i, Value scale, Value offset) {
  Value v = arith::AddFOp::create(b, offset,
                                  arith::MulFOp::create(b, scale, randomUniform(seed, i)));
  return arith::TruncFOp::create(b, b.getF32Type(), v);
}

// out[i] = f32(offset + scale * u(seed, first + i)) as the storage type,
// i < count; a grid-stride loop.
KernelGenerator::Kernel KernelGenerator::randomUniformKernel(Type element) {
  std::string name = element.isF32() ? "random_uniform_f32" : "random_uniform_bf16";
  KernelSpec spec{KernelFamily::RandomUniform};
  spec.outF32 = element.isF32();
  Type i64 = b.getI64Type(), f64Type = b.getF64Type();
  if (!beginKernel(name, {flat(element), i64, i64, i64, f64Type, f64Type}, kFillThreads, 0))
    return {name, spec};
  Value out = kernel.getArgument(0), count = kernel.getArgument(1), seed = kernel.getArgument(2),
        first = kernel.getArgument(3), scale = kernel.getArgument(4),
        offset = kernel.getArgument(5);
  Value start = add(mul(gpu::BlockIdOp::create(b, gpu::Dimension::x), index(kFillThreads)),
                    threadId);
  Value stride = mul(gpu::GridDimOp::create(b, gpu::Dimension::x), index(kFillThreads));
  forLoop(start, toIndex(count), stride, [&](Value i) {
    Value stream = arith::AddIOp::create(b, first, arith::IndexCastOp::create(b, i64, i));
    store(randomWeight(seed, stream, scale, offset), out, i);
  });
  endKernel();
  return {name, spec};
}

// Row blockIdx.x of an e4m3 weight [rows, cols] (cols even) and its scale:
// the values f32(scale * u), their amax, the double scale
// max(amax, 1e-12) / 448, each value / scale rounded to f32 then e4m3
// (cvt.rn.satfinite, a pair per i16). The values are computed twice (for
// the amax, then to quantize) rather than held: rows are up to 33792 wide.
KernelGenerator::Kernel KernelGenerator::randomUniformFP8Kernel() {
  std::string name = "random_uniform_fp8";
  KernelSpec spec{KernelFamily::RandomUniformFP8};
  Type i64 = b.getI64Type();
  if (!beginKernel(name, {flat(b.getI16Type()), flat(b.getF32Type()), i64, i64, i64, b.getF64Type()},
                   kFillThreads, kReduceScratch))
    return {name, spec};
  Value pairs = kernel.getArgument(0), scales = kernel.getArgument(1), cols = kernel.getArgument(2),
        seed = kernel.getArgument(3), first = kernel.getArgument(4), scale = kernel.getArgument(5);
  Value row = gpu::BlockIdOp::create(b, gpu::Dimension::x);
  Value colsIndex = toIndex(cols), rowPairs = divu(colsIndex, 2);
  Value rowStart = arith::AddIOp::create(
      b, first, arith::MulIOp::create(b, arith::IndexCastOp::create(b, i64, row), cols));
  // Element 2p + k of the row.
  auto value = [&](Value p, int64_t k) {
    Value col = arith::IndexCastOp::create(b, i64, add(mul(p, index(2)), index(k)));
    return randomWeight(seed, arith::AddIOp::create(b, rowStart, col), scale, f64(0.0));
  };
  auto amaxLoop = scf::ForOp::create(b, threadId, rowPairs, index(kFillThreads), ValueRange{f32(0)});
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToEnd(amaxLoop.getBody());
    Value p = amaxLoop.getInductionVar(), amax = amaxLoop.getRegionIterArgs()[0];
    for (int64_t k = 0; k < 2; ++k)
      amax = maxf(amax, math::AbsFOp::create(b, value(p, k)));
    scf::YieldOp::create(b, amax);
  }
  Value amax = arith::ExtFOp::create(b, b.getF64Type(), blockMax(amaxLoop.getResult(0)));
  Value rowScale = arith::DivFOp::create(b, maxf(amax, f64(::cohere2c::kWeightAmaxFloor)),
                                         f64(::cohere2c::kE4M3Max));
  ifThen(cmp(arith::CmpIPredicate::eq, threadId, index(0)), [&] {
    memref::StoreOp::create(b, arith::TruncFOp::create(b, b.getF32Type(), rowScale), scales,
                            ValueRange{row});
  });
  forLoop(threadId, rowPairs, index(kFillThreads), [&](Value p) {
    auto quotient = [&](int64_t k) {
      Value x = arith::ExtFOp::create(b, b.getF64Type(), value(p, k));
      return arith::TruncFOp::create(b, b.getF32Type(), arith::DivFOp::create(b, x, rowScale))
          .getResult();
    };
    // cvt.rn.satfinite.e4m3x2.f32 puts its first operand in the upper byte.
    Value packed = NVVM::ConvertF32x2ToF8x2Op::create(
        b, b.getI16Type(), quotient(1), quotient(0), NVVM::FPRoundingMode::RN,
        NVVM::SaturationMode::SATFINITE, false, Float8E4M3FNType::get(b.getContext()));
    memref::StoreOp::create(b, packed, pairs, ValueRange{add(mul(row, rowPairs), p)});
  });
  endKernel();
  return {name, spec};
}

void KernelGenerator::generateWeightFills() {
  SmallVector<NamedAttribute> fills;
  std::map<std::string, bool> named;
  for (attn::WeightOp w : module.getOps<attn::WeightOp>()) {
    Type e = cast<RankedTensorType>(w.getType()).getElementType();
    if (!e.isF32() && !e.isBF16() && !isa<Float8E4M3FNType>(e))
      continue;
    std::string dtype = ::cohere2c::dtypeName(dtypeOf(e));
    if (named[dtype])
      continue;
    named[dtype] = true;
    Kernel k = e.isF32() || e.isBF16() ? randomUniformKernel(e) : randomUniformFP8Kernel();
    fills.push_back(b.getNamedAttr(dtype, FlatSymbolRefAttr::get(b.getContext(), k.name)));
  }
  planStep->setAttr(plan::kWeightFillAttrName, b.getDictionaryAttr(fills));
}

} // namespace mlir::cohere2c::attn_to_gpu
