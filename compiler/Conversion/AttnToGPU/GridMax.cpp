//===- GridMax.cpp - the largest value over the blocks of a launch --------===//

#include "Conversion/AttnToGPU/KernelPrimitives.h"

namespace mlir::cohere2c::attn_to_gpu {

namespace {
constexpr int32_t kCount = 0, kGeneration = 1, kAmax = 2; // words of the state
} // namespace

// A sense-reversing barrier (Mellor-Crummey and Scott, "Algorithms for
// scalable synchronization on shared-memory multiprocessors", 1991) on a
// device global of four words, zero when the module loads: the blocks
// arrived, the generation (the launches completed so far), and the maximum
// of the current generation and of the next, by parity. Non-negative f32
// values order as their bits do as unsigned integers, so the maximum is an
// atomic unsigned max (a NaN, whose magnitude's bits exceed infinity's,
// wins as arith.maximumf's would). The last block to arrive clears the
// count and the next generation's maximum, then advances the generation
// (release), which the others wait for (acquire). The read-modify-writes
// are relaxed between explicit fences: LLVM 22's NVPTX backend emits every
// atomicrmw as a relaxed atom, whatever its ordering. Launches of one kernel
// follow each other (each waits for the launch before it), so no two
// generations overlap: the state is the kernel symbol's, which assumes the
// kernel never runs on both streams at once (a layer's SwiGLU runs on the
// side stream only) and a grid of one block along x. Thread 0 of each block
// takes part; the block reads the result through shared memory.
Value KernelPrimitives::gridMax(Value v, int64_t blocks) {
  Type i32 = b.getI32Type();
  auto state = LLVM::LLVMArrayType::get(i32, 4);
  auto module = kernel->getParentOfType<gpu::GPUModuleOp>();
  std::string name = (kernel.getName() + "_grid_state").str();
  auto global = module.lookupSymbol<LLVM::GlobalOp>(name);
  if (!global) {
    OpBuilder mb = OpBuilder::atBlockBegin(module.getBody());
    global = LLVM::GlobalOp::create(mb, b.getLoc(), state, /*isConstant=*/false,
                                    LLVM::Linkage::Internal, name, Attribute(), /*alignment=*/16,
                                    /*addrSpace=*/1);
    Block *init = mb.createBlock(&global.getInitializerRegion());
    mb.setInsertionPointToStart(init);
    LLVM::ReturnOp::create(mb, b.getLoc(), LLVM::ZeroOp::create(mb, b.getLoc(), state));
  }
  Value base = LLVM::AddressOfOp::create(b, global);
  auto word = [&](Value i) {
    return LLVM::GEPOp::create(b, base.getType(), state, base,
                               ArrayRef<LLVM::GEPArg>{0, i});
  };
  auto constant = [&](int32_t c) { return arith::ConstantIntOp::create(b, c, 32).getResult(); };
  using LLVM::AtomicOrdering;
  auto loadWord = [&](Value ptr, AtomicOrdering order) {
    return LLVM::LoadOp::create(b, i32, ptr, /*alignment=*/4, false, false, false, false, order,
                                "device");
  };
  auto rmw = [&](LLVM::AtomicBinOp op, Value ptr, Value operand, AtomicOrdering order) {
    return LLVM::AtomicRMWOp::create(b, op, ptr, operand, order, "device").getResult();
  };
  auto fence = [&](AtomicOrdering order) { LLVM::FenceOp::create(b, order, "device"); };
  Value bits = arith::BitcastOp::create(b, i32, v);
  ifThen(cmp(arith::CmpIPredicate::eq, threadId, index(0)), [&] {
    Value generation = loadWord(word(constant(kGeneration)), AtomicOrdering::acquire);
    Value parity = arith::AndIOp::create(b, generation, constant(1));
    Value mine = word(arith::AddIOp::create(b, parity, constant(kAmax)));
    Value next = word(arith::SubIOp::create(b, constant(kAmax + 1), parity));
    rmw(LLVM::AtomicBinOp::umax, mine, bits, AtomicOrdering::monotonic);
    fence(AtomicOrdering::release);
    Value arrived = rmw(LLVM::AtomicBinOp::add, word(constant(kCount)), constant(1),
                        AtomicOrdering::monotonic);
    fence(AtomicOrdering::acquire);
    auto last = scf::IfOp::create(
        b, arith::CmpIOp::create(b, arith::CmpIPredicate::eq, arrived, constant(blocks - 1)),
        /*withElseRegion=*/true);
    {
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPoint(last.thenBlock()->getTerminator());
      LLVM::StoreOp::create(b, constant(0), word(constant(kCount)), 4, false, false, false,
                            AtomicOrdering::monotonic, "device");
      LLVM::StoreOp::create(b, constant(0), next, 4, false, false, false,
                            AtomicOrdering::monotonic, "device");
      fence(AtomicOrdering::release);
      rmw(LLVM::AtomicBinOp::add, word(constant(kGeneration)), constant(1),
          AtomicOrdering::monotonic);
      b.setInsertionPoint(last.elseBlock()->getTerminator());
      auto spin = scf::WhileOp::create(b, TypeRange{}, ValueRange{});
      Block *before = b.createBlock(&spin.getBefore());
      Value now = loadWord(word(constant(kGeneration)), AtomicOrdering::acquire);
      scf::ConditionOp::create(
          b, arith::CmpIOp::create(b, arith::CmpIPredicate::eq, now, generation), ValueRange{});
      Block *after = b.createBlock(&spin.getAfter());
      b.setInsertionPointToStart(after);
      scf::YieldOp::create(b);
    }
    Value result = loadWord(mine, AtomicOrdering::monotonic);
    memref::StoreOp::create(b, arith::BitcastOp::create(b, b.getF32Type(), result), scratch,
                            ValueRange{index(0)});
  });
  gpu::BarrierOp::create(b);
  return memref::LoadOp::create(b, scratch, ValueRange{index(0)});
}

} // namespace mlir::cohere2c::attn_to_gpu
