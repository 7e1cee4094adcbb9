//===- MmaFragments.cpp - mma.sync fragments and the online softmax -------===//

#include "Conversion/AttnToGPU/KernelGenerator.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"

#include <cmath>
#include <limits>

namespace mlir::cohere2c::attn_to_gpu {

SmallVector<Value>
KernelGenerator::softmaxTileUpdate(ValueRange state,
                                   MutableArrayRef<SmallVector<Value>> sTile,
                                   double log2Scale) {
  // P = 2^((x - from) log2Scale) as one fma and ex2.approx.ftz.
  Value scale = f32(log2Scale);
  auto weigh = [&](Value x, Value negFrom) -> Value {
    Value e = log2Scale == 1.0 ? addf(x, negFrom)
                               : math::FmaOp::create(b, x, scale, negFrom);
    return exp2(e);
  };
  // The rescale of the state from the difference of the maxima, so that it
  // is exactly 1 where the maximum did not change (fma(m, s, -from s) is
  // the rounding error of from s, not 0): a key tile that a row does not
  // see leaves its state as it was, bit for bit.
  auto rescale = [&](Value mOld, Value from) -> Value {
    Value d = subf(mOld, from);
    return exp2(log2Scale == 1.0 ? d : mulf(d, scale));
  };
  // Online softmax per row (a row's columns are spread over 4 lanes), with
  // a lazy reference: m is the row's maximum when it was last moved, and it
  // moves only when the row's maximum exceeds it by more than
  // kLazyRescaleLog2 in base 2 (as FlashAttention-4 does), so weights stay
  // at most 2^kLazyRescaleLog2 and O is rescaled only on such a move. l and
  // O are sums relative to whatever m is, and O / l and the merges of
  // partial results (m, l, O) hold for any reference; in f32 and bf16 a
  // weight of up to 256 is as precise as one of up to 1.
  SmallVector<Value> next(state.begin(), state.end());
  Value negFrom[2], alpha[2];
  for (int r = 0; r < 2; ++r) {
    Value seen = state[r];
    for (auto &acc : sTile)
      seen = maxf(seen, maxf(acc[2 * r], acc[2 * r + 1]));
    seen = maxf(seen, xorShuffle(seen, 1));
    seen = maxf(seen, xorShuffle(seen, 2));
    // From m = -inf any key moves it (+inf); with no key at all, -inf -
    // -inf is NaN, unordered, and m stays -inf.
    Value growth = subf(seen, state[r]);
    if (log2Scale != 1.0)
      growth = mulf(growth, scale);
    Value keep = arith::CmpFOp::create(b, arith::CmpFPredicate::OLE, growth,
                                       f32(kLazyRescaleLog2));
    Value m = arith::SelectOp::create(b, keep, state[r], seen);
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
  ValueRange o = state.drop_front(4);
  // -inf to -inf is no move: such a row's O is still 0.
  Value moved = arith::OrIOp::create(
      b, arith::CmpFOp::create(b, arith::CmpFPredicate::UNE, next[0], state[0]),
      arith::CmpFOp::create(b, arith::CmpFPredicate::UNE, next[1], state[1]));
  Value anyMoved = NVVM::VoteSyncOp::create(b, b.getI1Type(), i32(-1), moved,
                                            NVVM::VoteSyncKind::any);
  auto ifMoved =
      scf::IfOp::create(b, o.getTypes(), anyMoved, /*withElse=*/true);
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(ifMoved.thenBlock());
    SmallVector<Value> rescaled;
    for (size_t i = 0; i < o.size(); ++i)
      rescaled.push_back(mulf(o[i], alpha[(i % 4) / 2]));
    scf::YieldOp::create(b, rescaled);
    b.setInsertionPointToStart(ifMoved.elseBlock());
    scf::YieldOp::create(b, o);
  }
  llvm::copy(ifMoved.getResults(), next.begin() + 4);
  return next;
}

void KernelGenerator::accumulatePV(
    ArrayRef<SmallVector<Value>> pTile,
    function_ref<SmallVector<Value>(int64_t)> vFragments,
    MutableArrayRef<Value> o) {
  // O += P V, 16 keys at a time: P's A fragment is two adjacent S tiles.
  for (int64_t kk = 0; kk < (int64_t)pTile.size() / 2; ++kk) {
    SmallVector<Value> a = {
        packF32(pTile[2 * kk][0], pTile[2 * kk][1]),
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

SmallVector<Value> KernelGenerator::wordsAt(Value address, int64_t count) {
  int64_t unit = std::min<int64_t>(count, 4);
  assert(count % unit == 0 && (unit == 4 || unit == 2) &&
         "16- or 8-byte loads");
  Type vector = VectorType::get({unit}, b.getI32Type());
  SmallVector<Value> words;
  for (int64_t v = 0; v < count / unit; ++v) {
    Value at = pointerAt(
        add(address, arith::ConstantIntOp::create(b, v * unit * 4, 64)), 1);
    Value loaded = LLVM::LoadOp::create(b, vector, at, /*alignment=*/unit * 4);
    for (int64_t i = 0; i < unit; ++i)
      words.push_back(LLVM::ExtractElementOp::create(b, loaded, i32(i)));
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
  Type accType = LLVM::LLVMStructType::getLiteral(b.getContext(),
                                                  {f32t, f32t, f32t, f32t});
  Value d = NVVM::MmaOp::create(
      b, accType, a, bReg, c, {16, 8, 16}, std::nullopt, std::nullopt,
      std::array<NVVM::MMATypes, 2>{NVVM::MMATypes::bf16, NVVM::MMATypes::bf16},
      std::array<NVVM::MMALayout, 2>{NVVM::MMALayout::row,
                                     NVVM::MMALayout::col});
  SmallVector<Value> r;
  for (int64_t i = 0; i < 4; ++i)
    r.push_back(LLVM::ExtractValueOp::create(b, d, ArrayRef<int64_t>{i}));
  return r;
}

} // namespace mlir::cohere2c::attn_to_gpu
