//===- RandomStreams.cpp - splitmix64 draws on the device ----------------===//
//
// The host's formulas of lib/Artifact/SplitMix64.h, RandomWeights.h and
// GumbelNoise.h as device arithmetic, bit for bit: the same 64-bit integer
// steps, and the same double operations (a multiplication by a power of two
// is exact, as the host's division by it is).
//
//===----------------------------------------------------------------------===//

#include "Conversion/AttnToGPU/KernelGenerator.h"

namespace mlir::cohere2c::attn_to_gpu {

Value KernelGenerator::i64Constant(uint64_t v) {
  return arith::ConstantOp::create(b,
                                   b.getIntegerAttr(b.getI64Type(), (int64_t)v))
      .getResult();
}

Value KernelGenerator::splitMix64(Value seed, Value i) {
  auto xorShift = [&](Value z, uint64_t shift) {
    return arith::XOrIOp::create(
        b, z, arith::ShRUIOp::create(b, z, i64Constant(shift)));
  };
  Value z = arith::AddIOp::create(
      b, seed,
      arith::MulIOp::create(b, arith::AddIOp::create(b, i, i64Constant(1)),
                            i64Constant(0x9e3779b97f4a7c15ull)));
  z = arith::MulIOp::create(b, xorShift(z, 30),
                            i64Constant(0xbf58476d1ce4e5b9ull));
  z = arith::MulIOp::create(b, xorShift(z, 27),
                            i64Constant(0x94d049bb133111ebull));
  return xorShift(z, 31);
}

/// z >> shift (the top 64 - shift bits), as a double: exact up to 53 bits.
static Value topBits(ImplicitLocOpBuilder &b, Value z, Value shift) {
  return arith::UIToFPOp::create(b, b.getF64Type(),
                                 arith::ShRUIOp::create(b, z, shift));
}

Value KernelGenerator::randomUniform(Value seed, Value i) {
  Value bits = topBits(b, splitMix64(seed, i), i64Constant(64 - 53));
  return arith::SubFOp::create(b, arith::MulFOp::create(b, bits, f64(0x1p-52)),
                               f64(1.0));
}

Value KernelGenerator::gumbelNoise(Value seed, Value i) {
  Value bits = topBits(b, splitMix64(seed, i), i64Constant(64 - 52));
  Value u = arith::MulFOp::create(b, arith::AddFOp::create(b, bits, f64(0.5)),
                                  f64(0x1p-52));
  Value logU = math::LogOp::create(b, u);
  return arith::NegFOp::create(
      b, math::LogOp::create(b, arith::NegFOp::create(b, logU)));
}

} // namespace mlir::cohere2c::attn_to_gpu
