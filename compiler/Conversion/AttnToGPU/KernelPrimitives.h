//===- KernelPrimitives.h - row, warp and pool builders of the kernels -*- C++ -*-===//
//
// What the kernel emitters of KernelGenerator build with, below the level of
// a kernel family: f32/storage arithmetic, loops over threads, warp and block
// reductions, rows held in registers (load, map, reduce, store, quantize to
// FP8 rowwise) and the paged KV pool as a kernel sees it. The state of the
// kernel being generated (its gpu.func, thread id, shared scratch, block
// size) lives here, set by KernelGenerator::beginKernel.
//
//===----------------------------------------------------------------------===//
#ifndef COHERE2C_CONVERSION_ATTNTOGPU_KERNELPRIMITIVES_H
#define COHERE2C_CONVERSION_ATTNTOGPU_KERNELPRIMITIVES_H

#include "Conversion/KVCachePlacement.h"
#include "Conversion/RowwiseFP8.h"
#include "Conversion/ScalarBuilders.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/ImplicitLocOpBuilder.h"

namespace mlir::cohere2c::attn_to_gpu {

inline constexpr int64_t kWarp = 32;
inline constexpr int64_t kReduceScratch = 32; // block reductions: a float per warp
/// The most blocks a kernel with a grid-wide barrier (gridMax) may launch:
/// every block must be resident at once. Such a kernel has at most 256
/// threads a block and a few hundred bytes of shared memory, so an SM holds
/// at least two of its blocks (an H100 or H200 has 114 to 132 SMs, an H20 78;
/// a MIG slice of 16 SMs would hold them by occupancy, not checked here).
inline constexpr int64_t kMaxGridBlocks = 112;

/// KernelPrimitives' builder: a base, so that it exists before
/// ScalarBuilders, the next base, refers to it.
struct KernelBuilder {
  ImplicitLocOpBuilder builder;
};

class KernelPrimitives : protected KernelBuilder, protected ScalarBuilders {
protected:
  KernelPrimitives(Location loc, MLIRContext *context)
      : KernelBuilder{ImplicitLocOpBuilder(loc, context)}, ScalarBuilders(builder) {}

  // --- arithmetic helpers (f32 compute, E storage; and ScalarBuilders') ------
  Value f64(double v) { return arith::ConstantOp::create(b, b.getF64FloatAttr(v)); }
  Value i32(int64_t v) { return arith::ConstantIntOp::create(b, v, 32); }
  /// An index value as an i32 (its low 32 bits, unsigned): for the values
  /// that fit (positions, keys, thread, head and table indices, block sizes).
  Value toI32(Value v) {
    return arith::IndexCastUIOp::create(b, b.getI32Type(), v);
  }
  /// x / d and x % d (unsigned) by a constant d.
  Value divu(Value x, int64_t d) { return arith::DivUIOp::create(b, x, index(d)); }
  Value remu(Value x, int64_t d) { return arith::RemUIOp::create(b, x, index(d)); }
  /// The integer comparison `x p y` (an i1).
  Value cmp(arith::CmpIPredicate p, Value x, Value y) {
    return arith::CmpIOp::create(b, p, x, y);
  }
  Value andi(Value x, Value y) { return arith::AndIOp::create(b, x, y); }
  Value maxf(Value x, Value y) { return arith::MaximumFOp::create(b, x, y); }
  /// 2^x by ex2.approx.ftz.f32 (PTX ISA): one MUFU.EX2. Without .ftz
  /// (llvm.exp2's lowering) ptxas wraps it in a compare and two multiplies to
  /// keep subnormal results, which a softmax weight of at most 2^-126 of the
  /// row's largest does not need.
  Value exp2(Value x) {
    return LLVM::CallIntrinsicOp::create(
               b, b.getF32Type(),
               b.getStringAttr("llvm.nvvm.ex2.approx.ftz.f32"), ValueRange{x})
        .getResult(0);
  }
  /// `v` of the lane whose id is this lane's xor `offset`.
  Value xorShuffle(Value v, int32_t offset) {
    return gpu::ShuffleOp::create(b, v, offset, kWarp, gpu::ShuffleMode::XOR).getShuffleResult();
  }
  /// Loads element i of a flat memref as f32 (or as is for integers).
  Value load(Value mem, Value i) {
    Value v = memref::LoadOp::create(b, mem, ValueRange{i});
    if (isa<FloatType>(v.getType()) && !v.getType().isF32())
      v = arith::ExtFOp::create(b, b.getF32Type(), v);
    return v;
  }
  /// Elements [base, base + count) of a flat memref of vector<chunk x E>
  /// (base and count multiples of chunk, in elements), as f32.
  SmallVector<Value> loadChunks(Value mem, Value base, int64_t count, int64_t chunk) {
    SmallVector<Value> values;
    Value first = divu(base, chunk);
    for (int64_t v = 0; v < count / chunk; ++v) {
      Value vec = memref::LoadOp::create(b, mem, ValueRange{add(first, index(v))});
      llvm::append_range(values, widenedElements(vec));
    }
    return values;
  }
  /// The elements of a vector of floats, each as f32.
  SmallVector<Value> widenedElements(Value vec) {
    SmallVector<Value> values;
    for (int64_t i = 0; i < cast<VectorType>(vec.getType()).getNumElements();
         ++i) {
      Value e = LLVM::ExtractElementOp::create(b, vec, i32(i));
      values.push_back(e.getType().isF32()
                           ? e
                           : arith::ExtFOp::create(b, b.getF32Type(), e));
    }
    return values;
  }
  /// The address of a memref's first element (its aligned pointer) as an
  /// integer of `bits` bits (a shared-memory address fits 32).
  Value addressOf(Value mem, unsigned bits) {
    Value p = memref::ExtractAlignedPointerAsIndexOp::create(b, mem);
    return arith::IndexCastUIOp::create(b, b.getIntegerType(bits), p);
  }
  /// An integer address as a pointer of address space `space` (1: global,
  /// 3: shared), for NVVM ops that take pointers.
  Value pointerAt(Value address, unsigned space) {
    return LLVM::IntToPtrOp::create(
        b, LLVM::LLVMPointerType::get(b.getContext(), space), address);
  }
  /// Elements of type `e` in one 16-byte access.
  static int64_t vectorUnit(Type e) { return 128 / e.getIntOrFloatBitWidth(); }
  /// Elements [i, i + n) of a flat float memref as f32, in one load of n
  /// elements (ld.global.v4 for 16 bytes): the caller guarantees that the
  /// memref's start address is a multiple of n element sizes and i a
  /// multiple of n, so the load is aligned.
  SmallVector<Value> loadUnit(Value mem, Value i, int64_t n) {
    Type e = cast<MemRefType>(mem.getType()).getElementType();
    int64_t bytes = e.getIntOrFloatBitWidth() / 8;
    return widenedElements(LLVM::LoadOp::create(
        b, VectorType::get({n}, e), unitPointer(mem, i, bytes), n * bytes));
  }
  /// Stores f32 `values` at elements [i, i + n) of a flat float memref in one
  /// store, rounded to its type; alignment as loadUnit's.
  void storeUnit(ArrayRef<Value> values, Value mem, Value i) {
    Type e = cast<MemRefType>(mem.getType()).getElementType();
    int64_t n = values.size(), bytes = e.getIntOrFloatBitWidth() / 8;
    Value vec = LLVM::PoisonOp::create(b, VectorType::get({n}, e));
    for (int64_t j = 0; j < n; ++j) {
      Value x = values[j].getType() == e
                    ? values[j]
                    : arith::TruncFOp::create(b, e, values[j]);
      vec = LLVM::InsertElementOp::create(b, vec, x, i32(j));
    }
    LLVM::StoreOp::create(b, vec, unitPointer(mem, i, bytes), n * bytes);
  }
  /// The global-memory address of element i of a flat memref of `bytes`-byte
  /// elements.
  Value unitPointer(Value mem, Value i, int64_t bytes) {
    Value offset =
        arith::IndexCastUIOp::create(b, b.getI64Type(), mul(i, index(bytes)));
    return pointerAt(arith::AddIOp::create(b, addressOf(mem, 64), offset), 1);
  }
  /// Stores an f32 value into a flat memref of any float type.
  void store(Value v, Value mem, Value i) {
    Type e = cast<MemRefType>(mem.getType()).getElementType();
    if (e != v.getType())
      v = arith::TruncFOp::create(b, e, v);
    memref::StoreOp::create(b, v, mem, ValueRange{i});
  }
  void forLoop(Value lb, Value ub, Value step, function_ref<void(Value)> body) {
    auto loop = scf::ForOp::create(b, lb, ub, step);
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPoint(loop.getBody()->getTerminator());
    body(loop.getInductionVar());
  }
  /// for i = threadIdx.x; i < n; i += blockDim.x
  void forThreads(int64_t n, function_ref<void(Value)> body) {
    forLoop(threadId, index(n), index(blockThreads), body);
  }
  /// silu(g) = g / (1 + exp(-g)), in f32.
  Value silu(Value g) {
    return arith::DivFOp::create(
        b, g, addf(f32(1), math::ExpOp::create(b, arith::NegFOp::create(b, g))));
  }
  /// Runs `body` only on threads where `cond` holds.
  void ifThen(Value cond, function_ref<void()> body) {
    auto op = scf::IfOp::create(b, cond, /*withElseRegion=*/false);
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPoint(op.thenBlock()->getTerminator());
    body();
  }
  /// Sum of `v` over the block's threads.
  Value blockSum(Value v) {
    return blockReduce(v, [&](Value x, Value y) { return addf(x, y); });
  }
  /// Maximum of `v` over the block's threads.
  Value blockMax(Value v) {
    return blockReduce(v, [&](Value x, Value y) {
      return arith::MaximumFOp::create(b, x, y);
    });
  }
  /// `combine` of `v` over the block's threads: butterfly shuffles within
  /// each warp, then every thread combines the warps' results from shared
  /// memory (kReduceScratch floats).
  Value blockReduce(Value v, function_ref<Value(Value, Value)> combine) {
    for (int32_t offset = kWarp / 2; offset > 0; offset /= 2)
      v = combine(v, xorShuffle(v, offset));
    assert(blockThreads % kWarp == 0 && "block reductions shuffle over full warps");
    int64_t warps = blockThreads / kWarp;
    if (warps == 1)
      return v;
    Value warp = arith::DivUIOp::create(b, threadId, index(kWarp));
    Value lane = arith::RemUIOp::create(b, threadId, index(kWarp));
    ifThen(arith::CmpIOp::create(b, arith::CmpIPredicate::eq, lane, index(0)),
           [&] { memref::StoreOp::create(b, v, scratch, ValueRange{warp}); });
    gpu::BarrierOp::create(b);
    Value result = memref::LoadOp::create(b, scratch, ValueRange{index(0)});
    for (int64_t w = 1; w < warps; ++w)
      result = combine(result, memref::LoadOp::create(b, scratch, ValueRange{index(w)}));
    gpu::BarrierOp::create(b); // scratch is reused by the next reduction
    return result;
  }

  /// One pair (x[2 pair], x[2 pair + 1]) of a row held in registers. Where
  /// `valid` is set (a partial last round), invalid pairs hold zeros.
  struct RowPair {
    Value pair, valid, x0, x1;
  };
  /// Loads a row of `width` (even) values into registers: thread x holds
  /// pairs x, x + blockDim, ...; all loads are issued before any use, so a
  /// row costs one memory latency, not one per element.
  SmallVector<RowPair> loadRow(int64_t width, function_ref<Value(Value)> valueAt) {
    return loadRowUnits(width, 2, [&](Value pair) -> SmallVector<Value> {
      Value even = mul(pair, index(2));
      return {valueAt(even), valueAt(add(even, index(1)))};
    });
  }
  /// loadRow by units of `unit` (even) consecutive values, each from one
  /// `unitAt(u)` (the values of unit u, elements [u unit, (u + 1) unit)):
  /// thread x holds units x, x + blockDim, ..., as the pairs they contain.
  SmallVector<RowPair>
  loadRowUnits(int64_t width, int64_t unit,
               function_ref<SmallVector<Value>(Value)> unitAt) {
    SmallVector<RowPair> row;
    int64_t units = width / unit;
    for (int64_t first = 0; first < units; first += blockThreads) {
      Value u = add(threadId, index(first)), valid;
      if (first + blockThreads > units) {
        valid = arith::CmpIOp::create(b, arith::CmpIPredicate::ult, u,
                                      index(units));
        u = arith::SelectOp::create(b, valid, u, index(0));
      }
      SmallVector<Value> xs = unitAt(u);
      for (int64_t j = 0; j < unit / 2; ++j)
        row.push_back({add(mul(u, index(unit / 2)), index(j)), valid, xs[2 * j],
                       xs[2 * j + 1]});
    }
    return mapRow(row, [](Value x, Value) { return x; });
  }
  /// fn(x, d) of every element d of a row (zeros where invalid).
  SmallVector<RowPair> mapRow(ArrayRef<RowPair> row, function_ref<Value(Value, Value)> fn) {
    SmallVector<RowPair> out;
    for (RowPair p : row) {
      Value even = mul(p.pair, index(2));
      p.x0 = fn(p.x0, even);
      p.x1 = fn(p.x1, add(even, index(1)));
      if (p.valid) {
        p.x0 = arith::SelectOp::create(b, p.valid, p.x0, f32(0));
        p.x1 = arith::SelectOp::create(b, p.valid, p.x1, f32(0));
      }
      out.push_back(p);
    }
    return out;
  }
  /// `combine` over the elements of a row held in registers, then the block.
  Value reduceRow(ArrayRef<RowPair> row, function_ref<Value(Value, Value)> combine) {
    Value v = combine(row[0].x0, row[0].x1);
    for (const RowPair &p : row.drop_front())
      v = combine(v, combine(p.x0, p.x1));
    return blockReduce(v, combine);
  }
  /// Runs `body` for each valid pair of a row.
  void forEachPair(ArrayRef<RowPair> row, function_ref<void(const RowPair &)> body) {
    for (const RowPair &p : row) {
      if (p.valid)
        ifThen(p.valid, [&] { body(p); });
      else
        body(p);
    }
  }
  /// Stores a row held in registers at out[rowBase + d].
  void storeRow(ArrayRef<RowPair> row, Value out, Value rowBase) {
    forEachPair(row, [&](const RowPair &p) {
      Value even = add(rowBase, mul(p.pair, index(2)));
      store(p.x0, out, even);
      store(p.x1, out, add(even, index(1)));
    });
  }
  /// The element of a 2-D launch over (row, chunk of blockDim elements):
  /// runs `body` with d = blockIdx.y * blockDim + threadIdx.x where d < width.
  void forChunkElement(int64_t width, function_ref<void(Value)> body) {
    Value d = add(mul(gpu::BlockIdOp::create(b, gpu::Dimension::y), index(blockThreads)),
                  threadId);
    if (width % blockThreads == 0)
      return body(d);
    ifThen(arith::CmpIOp::create(b, arith::CmpIPredicate::ult, d, index(width)),
           [&] { body(d); });
  }
  /// The largest magnitude of a row held in registers, over the block.
  Value rowAbsMax(ArrayRef<RowPair> row) {
    return reduceRow(mapRow(row, [&](Value x, Value) { return math::AbsFOp::create(b, x); }),
                     [&](Value x, Value y) { return arith::MaximumFOp::create(b, x, y); });
  }
  /// Quantizes row t (held in registers) to FP8 rowwise (RowwiseFP8.h);
  /// `pairsPerStore` as emitQuantize's.
  void emitRowQuantize(Value t, int64_t width, ArrayRef<RowPair> row,
                       Value pairs, Value scales, int64_t pairsPerStore = 1) {
    emitQuantize(
        t, width, row, rowAbsMax(row), index(0),
        arith::CmpIOp::create(b, arith::CmpIPredicate::eq, threadId, index(0)),
        pairs, scales, pairsPerStore);
  }
  /// Quantizes the part of row t (of `width`) held in registers, pairs
  /// [firstPair, firstPair + the row's pairs), with the scale of `amax`, the
  /// whole row's largest magnitude; the thread where `storesScale` holds
  /// stores it. Each pair (x[2j], x[2j+1]) becomes one i16 of two e4m3 bytes
  /// through cvt.rn.satfinite.e4m3x2.f32. With `pairsPerStore` > 1 (a row
  /// from loadRowUnits with units of 2 pairsPerStore values, firstPair 0 and
  /// width a multiple of that) a unit's pairs go out in one aligned store.
  void emitQuantize(Value t, int64_t width, ArrayRef<RowPair> row, Value amax,
                    Value firstPair, Value storesScale, Value pairs,
                    Value scales, int64_t pairsPerStore = 1) {
    RowwiseScale scale = emitRowwiseScale(b, amax);
    ifThen(storesScale, [&] {
      memref::StoreOp::create(b, arith::TruncFOp::create(b, b.getF32Type(), scale.scale),
                              scales, ValueRange{t});
    });
    auto quotient = [&](Value x) { return emitScaledQuotient(b, x, scale); };
    // cvt.rn.satfinite.e4m3x2.f32 puts its first operand in the upper byte:
    // pass (x[2j+1], x[2j]) to store the bytes in order.
    auto packed = [&](const RowPair &p) -> Value {
      return NVVM::ConvertF32x2ToF8x2Op::create(
          b, b.getI16Type(), quotient(p.x1), quotient(p.x0),
          NVVM::FPRoundingMode::RN, NVVM::SaturationMode::SATFINITE, false,
          Float8E4M3FNType::get(b.getContext()));
    };
    Value rowPairs = add(mul(t, index(width / 2)), firstPair);
    for (size_t first = 0; first < row.size(); first += pairsPerStore) {
      ArrayRef<RowPair> stored = row.slice(first, pairsPerStore);
      auto storePairs = [&] {
        Value at = add(rowPairs, stored[0].pair);
        if (pairsPerStore == 1) {
          memref::StoreOp::create(b, packed(stored[0]), pairs, ValueRange{at});
        } else {
          Value vec = LLVM::PoisonOp::create(
              b, VectorType::get({pairsPerStore}, b.getI16Type()));
          for (int64_t j = 0; j < pairsPerStore; ++j)
            vec = LLVM::InsertElementOp::create(b, vec, packed(stored[j]),
                                                i32(j));
          LLVM::StoreOp::create(b, vec, unitPointer(pairs, at, 2),
                                2 * pairsPerStore);
        }
      };
      if (stored[0].valid)
        ifThen(stored[0].valid, storePairs);
      else
        storePairs();
    }
  }
  /// The largest of `v` (a non-negative f32, the same in every thread of a
  /// block) over the `blocks` blocks of the launch along grid y, in every
  /// thread: a grid-wide barrier, so all blocks must be resident at once
  /// (blocks <= kMaxGridBlocks). Its state is a device global of the kernel's
  /// module (GridMax.cpp).
  Value gridMax(Value v, int64_t blocks);
  /// A KV group's paged cache as a kernel sees it: the pool (kvRowOffset's
  /// layout), the block tables [sequence][width] and this layer's slot among
  /// the group's groupLayers layers; kvWidth = KV heads x head_dim.
  struct PagedPool {
    Value pool, tables, width, blockSize, slot;
    int64_t groupLayers = 0, kvWidth = 0;
  };
  /// The PagedPool of a kernel whose arguments `tablesArg` and `poolArg` are
  /// the tables and the pool; every such kernel takes the slot, the block
  /// size and the table width as arguments 6, 7 and 8.
  PagedPool pagedPoolArgs(unsigned tablesArg, unsigned poolArg, int64_t groupLayers,
                          int64_t kvWidth) {
    PagedPool p;
    p.tables = kernel.getArgument(tablesArg);
    p.pool = kernel.getArgument(poolArg);
    p.slot = toIndex(kernel.getArgument(6));
    p.blockSize = toIndex(kernel.getArgument(7));
    p.width = toIndex(kernel.getArgument(8));
    p.groupLayers = groupLayers;
    p.kvWidth = kvWidth;
    return p;
  }
  /// The pool block at `tableIndex` of the table of the sequence at
  /// block-table row `seq`: tables[seq * width + tableIndex].
  Value tableBlock(const PagedPool &p, Value seq, Value tableIndex) {
    return toIndex(load(p.tables, add(mul(seq, p.width), tableIndex)));
  }
  /// The element offset in the pool of the K (kv = 0) or V (kv = 1) row of
  /// slot `inBlock` of `block` (kvPoolRowOffset's layout).
  Value kvRowOffset(const PagedPool &p, Value block, Value inBlock, int64_t kv) {
    return kvPoolRowOffset(b, block, p.slot, p.groupLayers, p.blockSize, inBlock, kv,
                           p.kvWidth);
  }
  /// kvRowOffset of position j of the sequence at block-table row `seq`.
  Value kvRowOffsetOf(const PagedPool &p, Value seq, Value j, int64_t kv) {
    Value block = tableBlock(p, seq, arith::DivUIOp::create(b, j, p.blockSize));
    return kvRowOffset(p, block, arith::RemUIOp::create(b, j, p.blockSize), kv);
  }
  /// A PagedPool addressed in bytes with 32-bit arithmetic, for the loops
  /// that address a K or V row per key: index values are 64-bit, and each of
  /// their sums and products costs two instructions, so that such addressing
  /// took more issue slots than the tensor-core work it fed. Every offset
  /// within a pool block fits 32 bits; a block's own offset is the one
  /// product that needs 64 (a pool spans up to tens of GB), one wide
  /// multiply. blockSize and width are the kernel's arguments as i32,
  /// blockBytes a pool block's bytes, planeBytes[kv] where this layer's K
  /// (kv = 0) and V rows start in a block (kvRowOffset's layout), rowBytes a
  /// token's row of KV heads.
  struct PoolBytes {
    Value address, blockSize, width, blockBytes, planeBytes[2];
    int64_t rowBytes = 0;
  };
  /// PoolBytes of a pool of `elementBytes`-byte elements.
  PoolBytes poolBytes(const PagedPool &p, int64_t elementBytes) {
    PoolBytes pb;
    pb.address = addressOf(p.pool, 64);
    pb.blockSize = toI32(p.blockSize);
    pb.width = toI32(p.width);
    pb.rowBytes = p.kvWidth * elementBytes;
    Value planeBytes = mul(pb.blockSize, i32(pb.rowBytes));
    pb.blockBytes = mul(planeBytes, i32(2 * p.groupLayers));
    Value kPlane = mul(toI32(p.slot), i32(2));
    for (int64_t kv = 0; kv < 2; ++kv)
      pb.planeBytes[kv] = mul(add(kPlane, i32(kv)), planeBytes);
    return pb;
  }
  /// tableBlock with i32 operands and result: `tableRow` is the sequence's
  /// block-table row times the table width.
  Value tableBlock32(const PagedPool &p, Value tableRow, Value tableIndex) {
    Value at = arith::IndexCastUIOp::create(b, b.getIndexType(),
                                            add(tableRow, tableIndex));
    return memref::LoadOp::create(b, p.tables, ValueRange{at});
  }
  /// The global address (i64) of byte `inRow` of the K (kv = 0) or V row of
  /// slot `slot` of pool block `block` (i32 values). `inRow` is added last,
  /// so that a loop-invariant inRow + planeBytes stays out of the loop.
  Value kvRowAddress(const PoolBytes &pb, Value block, Value slot, int64_t kv,
                     Value inRow) {
    Value inBlock =
        add(mul(slot, i32(pb.rowBytes)), add(pb.planeBytes[kv], inRow));
    return add(add(pb.address, wideProduct(block, pb.blockBytes)),
               arith::ExtUIOp::create(b, b.getI64Type(), inBlock));
  }
  /// x * y of two u32 values as a u64, one mul.wide.u32: in inline assembly
  /// because LLVM folds the zero extension of a loaded x into the load and
  /// then multiplies in 64 bits (mad.lo.s64, several instructions).
  Value wideProduct(Value x, Value y) {
    return LLVM::InlineAsmOp::create(b, b.getI64Type(), ValueRange{x, y},
                                     "mul.wide.u32 $0, $1, $2;", "=l,r,r",
                                     /*has_side_effects=*/false,
                                     /*is_align_stack=*/false,
                                     LLVM::tailcallkind::TailCallKind::None,
                                     LLVM::AsmDialectAttr(), ArrayAttr())
        .getResult(0);
  }

  // The kernel being generated.
  gpu::GPUFuncOp kernel;
  Value threadId, scratch;
  int64_t blockThreads = 0;
};

} // namespace mlir::cohere2c::attn_to_gpu

#endif // COHERE2C_CONVERSION_ATTNTOGPU_KERNELPRIMITIVES_H
