//===- RowKernels.cpp - kernels over rows of activations --------------------===//

#include "Conversion/AttnToGPU/KernelGenerator.h"

namespace mlir::cohere2c::attn_to_gpu {

// out[t, :] = table[ids[t], :]; a block per (token, chunk).
std::string KernelGenerator::embeddingKernel(Type table, Type result,
                                             int64_t hidden) {
  std::string name = sanitize("embedding_" + std::to_string(hidden));
  if (!beginKernel(name, {flat(b.getI32Type()), flat(table), flat(result)},
                   kChunkThreads, 0))
    return name;
  Value ids = kernel.getArgument(0), weights = kernel.getArgument(1),
        out = kernel.getArgument(2);
  Value t = gpu::BlockIdOp::create(b, gpu::Dimension::x);
  Value row = toIndex(load(ids, t));
  forChunkElement(hidden, [&](Value d) {
    store(load(weights, add(mul(row, index(hidden)), d)), out,
          add(mul(t, index(hidden)), d));
  });
  endKernel();
  return name;
}

// Cohere LayerNorm, statistics in f32; one block per row, held in registers.
std::string KernelGenerator::layerNormKernel(Type input, Type e, int64_t hidden,
                                             double eps) {
  std::string name = sanitize("layer_norm_" + std::to_string(hidden) + "_eps" +
                              std::to_string(eps));
  if (!beginKernel(name, {flat(input), flat(e), flat(e)}, rowThreads(hidden),
                   kReduceScratch))
    return name;
  Value in = kernel.getArgument(0), w = kernel.getArgument(1), out = kernel.getArgument(2);
  Value t = gpu::BlockIdOp::create(b, gpu::Dimension::x);
  Value rowBase = mul(t, index(hidden));
  storeRow(emitLayerNorm(in, w, rowBase, hidden, eps), out, rowBase);
  endKernel();
  return name;
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
std::string KernelGenerator::quantizeKernel(Type input, int64_t width) {
  std::string name = sanitize("quantize_fp8_" + std::to_string(width));
  if (!beginKernel(name, {flat(input), flat(b.getI16Type()), flat(b.getF32Type())},
                   rowThreads(width), kReduceScratch))
    return name;
  Value in = kernel.getArgument(0);
  Value t = gpu::BlockIdOp::create(b, gpu::Dimension::x);
  Value rowBase = mul(t, index(width));
  emitRowQuantize(t, width, loadRow(width, [&](Value d) { return load(in, add(rowBase, d)); }),
                  kernel.getArgument(1), kernel.getArgument(2));
  endKernel();
  return name;
}

// LayerNorm and the FP8 quantization of its output in one kernel: the
// normalized row (rounded to the norm's type, as unfused) stays in registers.
std::string KernelGenerator::layerNormQuantKernel(Type input, Type normType,
                                                  int64_t hidden, double eps) {
  std::string name = sanitize("layer_norm_quant_fp8_" + std::to_string(hidden) + "_eps" +
                              std::to_string(eps));
  if (!beginKernel(name, {flat(input), flat(normType), flat(b.getI16Type()),
                          flat(b.getF32Type())},
                   rowThreads(hidden), kReduceScratch))
    return name;
  Value in = kernel.getArgument(0), w = kernel.getArgument(1);
  Value t = gpu::BlockIdOp::create(b, gpu::Dimension::x);
  Value rowBase = mul(t, index(hidden));
  SmallVector<RowPair> normalized = mapRow(emitLayerNorm(in, w, rowBase, hidden, eps),
                                           [&](Value x, Value) { return roundTo(x, normType); });
  emitRowQuantize(t, hidden, normalized, kernel.getArgument(2), kernel.getArgument(3));
  endKernel();
  return name;
}

// SwiGLU and the FP8 quantization of its output in one kernel.
std::string KernelGenerator::swigluQuantKernel(Type e, int64_t width, int64_t gateStride,
                                               int64_t upStride) {
  std::string name = sanitize("swiglu_quant_fp8_" + std::to_string(width) +
                              strideSuffix("gate", gateStride, width) +
                              strideSuffix("up", upStride, width));
  if (!beginKernel(name, {flat(e), flat(e), flat(b.getI16Type()), flat(b.getF32Type())},
                   rowThreads(width), kReduceScratch))
    return name;
  Value gate = kernel.getArgument(0), up = kernel.getArgument(1);
  Value t = gpu::BlockIdOp::create(b, gpu::Dimension::x);
  Value gateRow = mul(t, index(gateStride)), upRow = mul(t, index(upStride));
  SmallVector<RowPair> row = loadRow(width, [&](Value d) {
    return roundTo(mulf(silu(load(gate, add(gateRow, d))), load(up, add(upRow, d))), e);
  });
  emitRowQuantize(t, width, row, kernel.getArgument(2), kernel.getArgument(3));
  endKernel();
  return name;
}

// silu(g) * u; a block per (row, chunk).
std::string KernelGenerator::swigluKernel(Type e, int64_t width, int64_t gateStride,
                                          int64_t upStride) {
  std::string name = sanitize("swiglu_" + std::to_string(width) +
                              strideSuffix("gate", gateStride, width) +
                              strideSuffix("up", upStride, width));
  if (!beginKernel(name, {flat(e), flat(e), flat(e)}, kChunkThreads, 0))
    return name;
  Value gate = kernel.getArgument(0), up = kernel.getArgument(1), out = kernel.getArgument(2);
  Value t = gpu::BlockIdOp::create(b, gpu::Dimension::x);
  forChunkElement(width, [&](Value d) {
    Value g = load(gate, add(mul(t, index(gateStride)), d));
    Value u = load(up, add(mul(t, index(upStride)), d));
    store(mulf(silu(g), u), out, add(mul(t, index(width)), d));
  });
  endKernel();
  return name;
}

// The parallel block's residual: out = x + attention + mlp; a block per
// (row, chunk).
std::string KernelGenerator::residualKernel(TypeRange inputs, Type result,
                                            int64_t width) {
  std::string name = sanitize("residual_sum" + std::to_string(inputs.size()) + "_" +
                              std::to_string(width));
  SmallVector<Type> args;
  for (Type t : inputs)
    args.push_back(flat(t));
  args.push_back(flat(result));
  if (!beginKernel(name, args, kChunkThreads, 0))
    return name;
  Value row = mul(gpu::BlockIdOp::create(b, gpu::Dimension::x), index(width));
  forChunkElement(width, [&](Value d) {
    Value i = add(row, d);
    Value sum = load(kernel.getArgument(0), i);
    for (size_t a = 1; a < inputs.size(); ++a)
      sum = addf(sum, load(kernel.getArgument(a), i));
    store(sum, kernel.getArgument(inputs.size()), i);
  });
  endKernel();
  return name;
}

// out[r, :] = in[rows[r], :]: the rows whose logits are wanted; a block per
// (row, chunk).
std::string KernelGenerator::gatherRowsKernel(Type e, int64_t width) {
  std::string name = sanitize("gather_rows_" + std::to_string(width));
  if (!beginKernel(name, {flat(e), flat(b.getI32Type()), flat(e)}, kChunkThreads, 0))
    return name;
  Value in = kernel.getArgument(0), rows = kernel.getArgument(1), out = kernel.getArgument(2);
  Value r = gpu::BlockIdOp::create(b, gpu::Dimension::x);
  Value t = toIndex(load(rows, r));
  forChunkElement(width, [&](Value d) {
    memref::StoreOp::create(
        b, memref::LoadOp::create(b, in, ValueRange{add(mul(t, index(width)), d)}), out,
        ValueRange{add(mul(r, index(width)), d)});
  });
  endKernel();
  return name;
}

} // namespace mlir::cohere2c::attn_to_gpu
