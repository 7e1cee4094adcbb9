//===- LinearKernels.cpp - linear layers of one token ---------------------===//

#include "Conversion/AttnToGPU/KernelGenerator.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"

namespace mlir::cohere2c::attn_to_gpu {

// A linear layer for a step of one token (decode at batch 1), where
// cuBLASLt's GEMMs read the weights below their bandwidth:
//   bf16: out[0, j] = sum_k x[0, k] w[j, k];
//   FP8 rowwise: out[0, j] = x_scale[0] w_scale[j] sum_k x[0, k] w[j, k]
//   (e4m3 operands, exact in f32), the recipe of the FP8 GEMM.
// Sums in f32, stored as `out` (bf16, or f32 where the layer writes the
// residual stream: name suffix "_outf32"). With an addend (suffix "_plus"),
// out[0, j] = addend[0, j] + that: a projection summed into the residual
// stream, as cuBLASLt's epilogue does it for the GEMMs of more tokens.
// Layout: a block of kGemvWarps warps in groups of gemvSlices(fp8, n); a
// group owns gemvRows(fp8) consecutive output rows, and its warps sum
// interleaved slices of k. Each step a lane reads 16 bytes of x and of each
// of its rows (a warp reads 512 contiguous bytes of a row). A warp sums its
// lanes by shuffles, then one thread per row adds its group's slices in
// slice order through shared memory (the same sum in every run).
// The weights of the first iterations are loaded before
// waitForPreviousLaunch(): no launch writes them, so they stream in while the
// kernel before this one (a norm, a quantization) still runs. Long rows load
// gemvLoadsAhead iterations ahead of the one being summed.
KernelGenerator::Kernel KernelGenerator::gemvKernel(bool fp8, int64_t n,
                                                    int64_t k, Type outType,
                                                    bool addend) {
  std::string name =
      sanitize(std::string("gemv_") + (fp8 ? "fp8" : "bf16") + "_n" +
               std::to_string(n) + "_k" + std::to_string(k) +
               (outType.isBF16() ? "" : "_outf32") + (addend ? "_plus" : ""));
  KernelSpec spec{fp8 ? KernelFamily::GemvFP8 : KernelFamily::Gemv};
  spec.outF32 = !outType.isBF16();
  spec.addend = addend;
  Type i32 = b.getI32Type(), f32t = b.getF32Type();
  Type quad = VectorType::get({4}, i32);
  // bf16: x, w[, addend], out; fp8: x, x_scale, w, w_scale[, addend], out
  // (x and w as 16-byte vectors).
  SmallVector<Type> args =
      fp8 ? SmallVector<Type>{flat(quad), flat(f32t), flat(quad), flat(f32t)}
          : SmallVector<Type>{flat(quad), flat(quad)};
  if (addend)
    args.push_back(flat(f32t));
  args.push_back(flat(outType));
  int64_t rows = gemvRows(fp8), slices = gemvSlices(fp8, n), groups = kGemvWarps / slices;
  int64_t perChunk = fp8 ? 16 : 8, chunks = k / perChunk;
  if (!beginKernel(name, args, kGemvWarps * kWarp, kGemvWarps * rows, /*waitAtStart=*/false))
    return {name, spec};
  Value x = kernel.getArgument(0), w = kernel.getArgument(fp8 ? 2 : 1),
        out = kernel.getArgument(args.size() - 1);
  Value warp = arith::DivUIOp::create(b, threadId, index(kWarp));
  Value lane = arith::RemUIOp::create(b, threadId, index(kWarp));
  Value blockRow = mul(gpu::BlockIdOp::create(b, gpu::Dimension::y), index(groups * rows));
  Value slice = arith::RemUIOp::create(b, warp, index(slices));
  Value firstRow =
      add(blockRow, mul(arith::DivUIOp::create(b, warp, index(slices)), index(rows)));
  // The 16 bytes of a chunk as f32 values, in an order that is the same for
  // x and w (all a dot product needs).
  auto unpack = [&](Value chunk) {
    SmallVector<Value> v;
    for (int32_t i = 0; i < 4; ++i) {
      Value word = LLVM::ExtractElementOp::create(b, chunk, arith::ConstantIntOp::create(b, i, 32));
      if (!fp8) { // two bf16: the high half is an f32 with a zero low half
        Value sixteen = arith::ConstantIntOp::create(b, 16, 32);
        Value high = arith::ConstantIntOp::create(b, 0xFFFF0000LL, 32);
        v.push_back(arith::BitcastOp::create(b, f32t, arith::ShLIOp::create(b, word, sixteen)));
        v.push_back(arith::BitcastOp::create(b, f32t, arith::AndIOp::create(b, word, high)));
        continue;
      }
      // four e4m3: two pairs through cvt.rn.f16x2.e4m3x2 (exact), then f32.
      for (int32_t half = 0; half < 2; ++half) {
        Value bits = arith::TruncIOp::create(
            b, b.getI16Type(),
            arith::ShRUIOp::create(b, word, arith::ConstantIntOp::create(b, 16 * half, 32)));
        Value pair = LLVM::BitcastOp::create(b, VectorType::get({2}, b.getI8Type()), bits);
        Value halves = NVVM::ConvertF8x2ToF16x2Op::create(
            b, VectorType::get({2}, b.getF16Type()), pair, b.getBoolAttr(false),
            TypeAttr::get(Float8E4M3FNType::get(b.getContext())));
        for (int32_t e = 0; e < 2; ++e)
          v.push_back(arith::ExtFOp::create(
              b, f32t,
              LLVM::ExtractElementOp::create(b, halves, arith::ConstantIntOp::create(b, e, 32))
                  .getResult()));
      }
    }
    return v;
  };
  SmallVector<Value> row, acc;
  for (int64_t r = 0; r < rows; ++r) {
    // A row past n reads row n - 1 and is not stored.
    row.push_back(arith::MinUIOp::create(b, add(firstRow, index(r)), index(n - 1)));
    acc.push_back(f32(0));
  }
  Value sliceLane = add(mul(slice, index(kWarp)), lane);
  // Chunk q of each iteration (first = iteration x kWarp x slices), and
  // whether it is inside the row (only the last iteration can pass the end).
  struct Iteration {
    Value q, valid;
    SmallVector<Value> weights; // [rows], 16-byte vectors
  };
  SmallVector<Iteration> iterations;
  for (int64_t first = 0; first < chunks; first += kWarp * slices) {
    Iteration it{add(sliceLane, index(first)), Value(), {}};
    if (first + kWarp * slices > chunks) {
      it.valid = arith::CmpIOp::create(b, arith::CmpIPredicate::ult, it.q, index(chunks));
      it.q = arith::SelectOp::create(b, it.valid, it.q, index(0));
    }
    iterations.push_back(it);
  }
  auto loadWeights = [&](Iteration &it) {
    for (int64_t r = 0; r < rows; ++r)
      it.weights.push_back(
          memref::LoadOp::create(b, w, ValueRange{add(mul(row[r], index(chunks)), it.q)}));
  };
  size_t ahead = (size_t)gemvLoadsAhead(fp8, (int64_t)iterations.size());
  for (size_t i = 0; i < iterations.size() && i < std::max<size_t>(ahead, kGemvEarlyIterations); ++i)
    loadWeights(iterations[i]);
  waitForPreviousLaunch();
  for (size_t i = 0; i < iterations.size(); ++i) {
    Iteration &it = iterations[i];
    if (ahead > 0 && i + ahead < iterations.size() && iterations[i + ahead].weights.empty())
      loadWeights(iterations[i + ahead]);
    Value q = it.q, valid = it.valid;
    SmallVector<Value> xv = unpack(memref::LoadOp::create(b, x, ValueRange{q}));
    if (it.weights.empty())
      loadWeights(it);
    for (int64_t r = 0; r < rows; ++r) {
      SmallVector<Value> wv = unpack(it.weights[r]);
      Value dot = f32(0);
      for (size_t e = 0; e < wv.size(); ++e)
        dot = math::FmaOp::create(b, xv[e], wv[e], dot);
      if (valid)
        dot = arith::SelectOp::create(b, valid, dot, f32(0));
      acc[r] = addf(acc[r], dot);
    }
  }
  Value laneZero = arith::CmpIOp::create(b, arith::CmpIPredicate::eq, lane, index(0));
  for (int64_t r = 0; r < rows; ++r) {
    Value sum = acc[r];
    for (int32_t offset = kWarp / 2; offset > 0; offset /= 2)
      sum = addf(sum, gpu::ShuffleOp::create(b, sum, offset, kWarp, gpu::ShuffleMode::XOR)
                          .getShuffleResult());
    ifThen(laneZero, [&] {
      memref::StoreOp::create(b, sum, scratch, ValueRange{add(mul(warp, index(rows)), index(r))});
    });
  }
  gpu::BarrierOp::create(b);
  // Thread g * rows + r stores row r of group g.
  Value group = arith::DivUIOp::create(b, threadId, index(rows));
  Value target = add(blockRow, threadId);
  Value storing = arith::AndIOp::create(
      b, arith::CmpIOp::create(b, arith::CmpIPredicate::ult, threadId, index(groups * rows)),
      arith::CmpIOp::create(b, arith::CmpIPredicate::ult, target, index(n)));
  ifThen(storing, [&] {
    Value r = arith::RemUIOp::create(b, threadId, index(rows));
    Value result = f32(0);
    for (int64_t s = 0; s < slices; ++s)
      result = addf(result, memref::LoadOp::create(
                                b, scratch,
                                ValueRange{add(mul(add(mul(group, index(slices)), index(s)),
                                                   index(rows)),
                                               r)}));
    if (fp8)
      result = mulf(mulf(load(kernel.getArgument(1), index(0)),
                         load(kernel.getArgument(3), target)),
                    result);
    if (addend)
      result = addf(load(kernel.getArgument(args.size() - 2), target), result);
    store(result, out, target);
  });
  endKernel();
  return {name, spec};
}

} // namespace mlir::cohere2c::attn_to_gpu
