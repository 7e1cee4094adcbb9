//===- KernelGenerator.h - the kernels and plan of convert-attn-to-gpu -*- C++ -*-===//
//
// The generator behind convert-attn-to-gpu (AttnToGPU.h): it writes one
// gpu.func per specialized kernel into a gpu.module and records the step as
// a LaunchPlan. Kernels take flat pointers (bare-pointer memrefs of a
// static, nominal size) and compute in f32 whatever the storage type.
// Formulas: docs/ARCHITECTURE.md, "The model", as in the host lowering
// (AttnToHost.cpp). The kernels are defined by family: RowKernels.cpp
// (embedding, norms, quantization, SwiGLU, residuals, row gathers),
// AttentionKernels.cpp (KV append, decode and prefill attention),
// LinearKernels.cpp (linear layers of one token); the plan in AttnToGPU.cpp.
//
//===----------------------------------------------------------------------===//
#ifndef COHERE2C_CONVERSION_ATTNTOGPU_KERNELGENERATOR_H
#define COHERE2C_CONVERSION_ATTNTOGPU_KERNELGENERATOR_H

#include "Conversion/KVCachePlacement.h"
#include "Conversion/RowwiseFP8.h"
#include "Conversion/ScalarBuilders.h"
#include "cohere2c/Dialect/Attn/IR/Attn.h"
#include "cohere2c/Dialect/Plan/IR/Plan.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/ImplicitLocOpBuilder.h"

#include <map>
#include <string>
#include <tuple>
#include <vector>

namespace mlir::cohere2c::attn_to_gpu {

using ::cohere2c::KernelFamily;
using ::cohere2c::KernelRows;
using ::cohere2c::KernelSpec;
using ::cohere2c::kMaxDecodeSplits;
using ::cohere2c::kMaxPrefillSplits;
using ::cohere2c::kMinPrefillSplitKeyTiles;
using ::cohere2c::kPrefillKeyTile;
using ::cohere2c::kPrefillTileTokens;
using ::cohere2c::PlanArg;
using ::cohere2c::PlanInput;
using ::cohere2c::StepParam;
using plan::dtypeOf;

/// The nominal size of a flat kernel argument: bare-pointer kernel
/// arguments need a static shape; only the pointer is passed.
inline constexpr int64_t kFlat = int64_t(1) << 40;
inline constexpr int64_t kChunkThreads = 256;  // elementwise kernels: threads per chunk
inline constexpr int64_t kReduceScratch = 32;  // block reductions: a float per warp
inline constexpr int64_t kAttentionWarps = 4; // split attention on CUDA cores: warps per block
inline constexpr int64_t kKeysInFlight = 4;    // decode attention: keys a lane group loads at once
inline constexpr int64_t kWarp = 32;
// Decode attention: lanes that share a key's dot product (head_dim / kKeyLanes features each),
// so that a warp computes kKeySubgroups keys at once and reduces each over 4 shuffles, not 5
// for one key.
inline constexpr int64_t kKeyLanes = 16;
inline constexpr int64_t kAttentionBlocksPerSM = 3; // decode attention: ptxas's register bound
inline constexpr int64_t kDecodeKeyTile = 16;       // decode attention on tensor cores: keys a step
inline constexpr int64_t kDecodeBlocksPerSM = 8;    // ... (one warp each) and its register bound
inline constexpr int64_t kKeySubgroups = kWarp / kKeyLanes;
inline constexpr int64_t kGemvWarps = 8; // one-token linear layers: warps per block
inline constexpr int64_t kGreedyThreads = 1024; // greedy tokens: threads per logits row
inline constexpr int64_t kGreedyLoads = 8;      // greedy tokens: loads a thread has in flight

/// Output rows per warp of the one-token linear kernel: more for FP8, whose
/// x values cost a conversion that the rows share.
inline int64_t gemvRows(bool fp8) { return fp8 ? 4 : 2; }
/// Blocks the one-token linear kernel should have: enough that every SM holds
/// several (132 SMs on an H200), so that weight loads keep the memory busy.
inline constexpr int64_t kGemvMinBlocks = 1024;
/// Warps of a block that share its output rows, each summing a slice of k
/// (1, 2, 4 or 8): the fewest that give kGemvMinBlocks blocks, or 8 where
/// none does (n below 2048 in bf16, 4096 in FP8). Layers with few output
/// rows (o, down: 4096 of R7B) take several, q/k/v/gate/up one.
inline int64_t gemvSlices(bool fp8, int64_t n) {
  int64_t slices = 1;
  while (slices < kGemvWarps && n * slices < kGemvMinBlocks * kGemvWarps * gemvRows(fp8))
    slices *= 2;
  return slices;
}
/// Iterations of the one-token linear kernel whose weights it loads before
/// waiting for the previous launch, at the least (16 bytes of each of its
/// rows per lane and iteration: gemvRows 16-byte registers per lane and
/// iteration); gemvLoadsAhead where that is more.
inline constexpr int64_t kGemvEarlyIterations = 2;
/// Iterations ahead of the one being summed whose weights a lane has in
/// flight, for a kernel of `iterations` iterations (0: each iteration loads
/// its own, after the first kGemvEarlyIterations). Timed on an H200 against
/// the shapes of Command A and Command R7B (bench/gemv_variants.cu): long
/// rows need loads far ahead to keep enough bytes in flight (Command A's
/// merged qkv + gate/up, 24 iterations: 285 us at 0, 248 at 2, 239 at 4;
/// its down projection, 18: 117 us at 0, 105 at 3); shorter ones gain
/// nothing and lose occupancy to the registers (Command R7B's, 16 or fewer).
/// FP8 only: the bf16 kernels (2 rows a warp) were not timed with it.
inline int64_t gemvLoadsAhead(bool fp8, int64_t iterations) {
  return !fp8 ? 0 : iterations >= 20 ? 4 : iterations >= 18 ? 3 : 0;
}
/// Output rows of a block of the one-token linear kernel.
inline int64_t gemvBlockRows(bool fp8, int64_t n) {
  return kGemvWarps / gemvSlices(fp8, n) * gemvRows(fp8);
}

inline std::string sanitize(std::string s) {
  for (char &c : s)
    if (!isalnum((unsigned char)c))
      c = '_';
  return s;
}

inline PlanArg buffer(const std::string &name) { return PlanArg::buffer(name); }
inline PlanArg weightArg(StringRef name) { return PlanArg::weight(name.str()); }
inline PlanArg input(PlanInput i) { return PlanArg::of(i); }
inline PlanArg param(StepParam p) { return PlanArg::of(p); }
inline PlanArg constant(int64_t v) { return PlanArg::constant(v); }

/// Threads of a kernel holding a row of `width` values in registers: a power
/// of two in [32, 1024], at most 8 pairs per thread below 16384 values.
inline int64_t rowThreads(int64_t width) {
  int64_t threads = kWarp;
  while (threads < 1024 && threads * 16 < width)
    threads *= 2;
  return threads;
}

/// "_<what>stride<stride>" in a kernel's name where a row stride is not the
/// row's own width (a view into a merged GEMM's output).
inline std::string strideSuffix(const std::string &what, int64_t stride, int64_t width) {
  return stride == width ? "" : "_" + what + "stride" + std::to_string(stride);
}

/// Blocks of kChunkThreads covering `width` elements.
inline int64_t chunksOf(int64_t width) { return (width + kChunkThreads - 1) / kChunkThreads; }

/// Generates kernels into one gpu.module and records the step's launches
/// into a plan.step.
/// KernelGenerator's builder: a base, so that it exists before
/// ScalarBuilders, the next base, refers to it.
struct KernelBuilder {
  ImplicitLocOpBuilder builder;
};

class KernelGenerator : KernelBuilder, ScalarBuilders {
public:
  KernelGenerator(ModuleOp module, gpu::GPUModuleOp kernels, plan::StepOp planStep)
      : KernelBuilder{ImplicitLocOpBuilder(module.getLoc(), module.getContext())},
        ScalarBuilders(builder), module(module), kernels(kernels), planStep(planStep) {}

  LogicalResult run(func::FuncOp step);

private:
  // --- arithmetic helpers (f32 compute, E storage; and ScalarBuilders') ------
  Value f64(double v) { return arith::ConstantOp::create(b, b.getF64FloatAttr(v)); }
  /// x / d and x % d (unsigned) by a constant d.
  Value divu(Value x, int64_t d) { return arith::DivUIOp::create(b, x, index(d)); }
  Value remu(Value x, int64_t d) { return arith::RemUIOp::create(b, x, index(d)); }
  /// The integer comparison `x p y` (an i1).
  Value cmp(arith::CmpIPredicate p, Value x, Value y) {
    return arith::CmpIOp::create(b, p, x, y);
  }
  Value andi(Value x, Value y) { return arith::AndIOp::create(b, x, y); }
  Value maxf(Value x, Value y) { return arith::MaximumFOp::create(b, x, y); }
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
      for (int64_t i = 0; i < chunk; ++i) {
        Value e = LLVM::ExtractElementOp::create(
            b, vec, arith::ConstantIntOp::create(b, i, 32).getResult());
        values.push_back(e.getType().isF32() ? e : arith::ExtFOp::create(b, b.getF32Type(), e));
      }
    }
    return values;
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
    SmallVector<RowPair> row;
    int64_t pairs = width / 2;
    for (int64_t first = 0; first < pairs; first += blockThreads) {
      RowPair p;
      p.pair = add(threadId, index(first));
      if (first + blockThreads > pairs) {
        p.valid = arith::CmpIOp::create(b, arith::CmpIPredicate::ult, p.pair, index(pairs));
        p.pair = arith::SelectOp::create(b, p.valid, p.pair, index(0));
      }
      Value even = mul(p.pair, index(2));
      p.x0 = valueAt(even);
      p.x1 = valueAt(add(even, index(1)));
      row.push_back(p);
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
  /// Quantizes row t (held in registers) to FP8 rowwise (RowwiseFP8.h): each
  /// pair (x[2j], x[2j+1]) becomes one i16 of two e4m3 bytes through
  /// cvt.rn.satfinite.e4m3x2.f32.
  void emitRowQuantize(Value t, int64_t width, ArrayRef<RowPair> row, Value pairs,
                       Value scales) {
    Value amax = reduceRow(mapRow(row, [&](Value x, Value) { return math::AbsFOp::create(b, x); }),
                           [&](Value x, Value y) { return arith::MaximumFOp::create(b, x, y); });
    RowwiseScale scale = emitRowwiseScale(b, amax);
    Value first = arith::CmpIOp::create(b, arith::CmpIPredicate::eq, threadId, index(0));
    ifThen(first, [&] {
      memref::StoreOp::create(b, arith::TruncFOp::create(b, b.getF32Type(), scale.scale),
                              scales, ValueRange{t});
    });
    auto quotient = [&](Value x) { return emitScaledQuotient(b, x, scale); };
    forEachPair(row, [&](const RowPair &p) {
      // cvt.rn.satfinite.e4m3x2.f32 puts its first operand in the upper byte: pass
      // (x[2j+1], x[2j]) to store the bytes in order.
      Value packed = NVVM::ConvertF32x2ToF8x2Op::create(
          b, b.getI16Type(), quotient(p.x1), quotient(p.x0), NVVM::FPRoundingMode::RN,
          NVVM::SaturationMode::SATFINITE, false, Float8E4M3FNType::get(b.getContext()));
      memref::StoreOp::create(b, packed, pairs,
                              ValueRange{add(mul(t, index(width / 2)), p.pair)});
    });
  }
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

  /// A generated kernel: its symbol in the gpu.module and what it computes
  /// (carried by every plan.launch of it).
  struct Kernel {
    std::string name;
    KernelSpec spec;
  };
  // --- kernels ---------------------------------------------------------------
  MemRefType flat(Type element) { return MemRefType::get({kFlat}, element); }
  /// Starts kernel `name` (returns false if it exists: generate nothing).
  /// `scratchFloats` > 0 gives the kernel that many f32 of shared memory.
  /// With `waitAtStart` the kernel begins with waitForPreviousLaunch();
  /// without, the generator must emit it before the first access to
  /// activations (reads of weights may come first).
  bool beginKernel(const std::string &name, ArrayRef<Type> args, int64_t threads,
                   int64_t scratchFloats, bool waitAtStart = true);
  /// Programmatic dependent launch (docs/ARCHITECTURE.md): the runtime may start
  /// a kernel while the launch before it still runs. This waits until that
  /// launch has finished and its writes are visible (griddepcontrol.wait;
  /// so this kernel's writes also come after that launch's reads), then lets
  /// the next launch start early (griddepcontrol.launch_dependents).
  void waitForPreviousLaunch();
  void endKernel();

  Kernel embeddingKernel(Type table, Type result, int64_t hidden);
  Kernel layerNormKernel(Type input, Type e, int64_t hidden, double eps);
  // Kernels reading projections take their row strides: a projection can be
  // a column range of a merged GEMM's output.
  // RoPE layers: the kernel also takes q (row stride qStride) and writes q
  // rotated into its last argument [tokens, heads x hd], what the attention
  // kernels then read.
  Kernel kvAppendKernel(Type e, attn::AttentionOp op, int64_t layersInGroup,
                             int64_t kStride, int64_t vStride, int64_t qStride);
  /// The name of a split attention kernel of `op` (window, heads, KV heads,
  /// head_dim, the group's layers, q's row stride when not dense).
  std::string splitAttentionName(attn::AttentionOp op, int64_t layersInGroup, int64_t qStride);
  /// What a block of a split attention kernel (attentionKernel's arguments)
  /// starts from: its arguments, its row of partial results and split
  /// (block x = row * splits + split), that row's token, its KV head (block
  /// y), and the thread's warp and lane.
  struct SplitAttentionBlock {
    Value q, positions, seqs, out, partial, splits;
    Value row, split, token, kvh, warp, lane;
  };
  SplitAttentionBlock splitAttentionBlock(bool generatedOnly);
  /// Split attention on CUDA cores, every token of the step (f32, and bf16
  /// groups past 16 query heads).
  Kernel attentionKernel(Type e, attn::AttentionOp op, int64_t layersInGroup, int64_t qStride);
  /// The keys a warp of attentionKernel reads: [lo, hi) of block-table row
  /// `seq`, in the paged cache `pool` (kvRowOffset's layout), this lane's
  /// features at `headOffset` within a K or V row.
  /// The pool is read as vectors of `chunk` elements (up to 16 bytes, one
  /// ld.global.v4 per lane and row on head_dim 128 in bf16), not element by
  /// element: a decode step at large batch is bound by these reads.
  /// Keys are addressed by cursors, (table index, slot in block) = (j / block
  /// size, j % block size) of each of a lane group's kKeysInFlight keys,
  /// advanced by (stepBlocks, stepSlots) = the division of a loop step, so
  /// that the loop divides by the runtime block size nowhere: a division is
  /// a branch (LLVM's 32-bit bypass) that keeps ptxas from issuing the keys'
  /// loads together. (lastBlock, lastSlot): key hi - 1, read for keys past hi.
  struct PagedKeys {
    PagedPool paged;
    int64_t chunk = 1;
    Value seq, headOffset, lo, hi;
    Value stepBlocks, stepSlots, lastBlock, lastSlot;
  };
  /// The cursors [u][table index, slot] of this lane group's keys
  /// lo + u * kKeySubgroups + keySub, flat; and the same a loop step later.
  SmallVector<Value> keyCursors(const PagedKeys &keys, Value keySub);
  SmallVector<Value> advanceKeyCursors(const PagedKeys &keys, ValueRange cursors);
  /// The cursor (table index, slot) of key j + n from j's and the division
  /// of n by the block size (blocks, slots).
  std::pair<Value, Value> addToCursor(Value tableIndex, Value slot, Value blocks, Value slots,
                                      Value blockSize);
  /// The keys [lo, hi) of split `split` of `splits` for position p: a
  /// contiguous share of the keys the position sees (empty for later splits
  /// when there are fewer keys than splits).
  std::pair<Value, Value> splitKeys(std::optional<int64_t> window, Value p, Value splits,
                                    Value split);
  /// attentionKernel's warp's keys [lo, hi): its contiguous share of the
  /// split's (later warps' shares may be empty).
  std::pair<Value, Value> attentionWarpKeys(std::optional<int64_t> window, Value p,
                                            Value splits, Value split, Value warp);
  /// attentionKernel's shared memory, f32: a slot per (warp w, head g of the
  /// KV head's group), slot w * group + g; the slots' running maxima, then
  /// their sums, then their accumulators (hd each).
  struct AttentionScratch {
    int64_t group, hd;
    int64_t slots() const { return kAttentionWarps * group; }
    int64_t floats() const { return slots() * (2 + hd); }
    Value sumAt(KernelGenerator &k, Value slot) const { return k.add(k.index(slots()), slot); }
    Value accAt(KernelGenerator &k, Value slot) const {
      return k.add(k.index(2 * slots()), k.mul(slot, k.index(hd)));
    }
  };
  /// The online softmax of lane group keySub over its kKeysInFlight keys
  /// j0 + u * kKeySubgroups + keySub for the `group` query heads whose q is
  /// in qv ([group][head_dim / kKeyLanes], this lane's features):
  /// (m, l, acc[head_dim / kKeyLanes]) per head in and out; `cursors`
  /// address the keys (keyCursors).
  SmallVector<Value> attentionKeyGroup(const PagedKeys &keys, ArrayRef<Value> qv,
                                       int64_t group, Value j0, Value keySub, ValueRange state,
                                       ValueRange cursors);
  /// Combines the warp's lane groups' (m, l, acc) per head; every lane
  /// group then holds the warp's.
  SmallVector<Value> attentionMergeKeySubgroups(ValueRange state, int64_t group);
  /// What an online softmax with running maximum m (f32) takes exponents
  /// from: m, or 0 while m is -inf (no key yet), so that exp(x - from) is 0
  /// for x = -inf rather than NaN.
  Value softmaxFrom(Value m);
  /// Stores this warp's (m, l, acc) per head in shared memory (lane group 0's).
  void attentionPublishWarp(const AttentionScratch &layout, ValueRange state, Value warp,
                            Value keyLane, Value keySub);
  /// Where a split attention block's result goes: out [tokens, heads x hd]
  /// of `token` with one split, else its partial result (block row `row`,
  /// split `split`) for attentionMergeKernel.
  struct AttentionOutput {
    Value out, partial, token, row, split, splits, firstHead;
    int64_t heads, hd;
  };
  /// Combines the warps' results per (head g of the group, feature d) and
  /// stores them (storeAttentionResult).
  void attentionMergeWarps(const AttentionScratch &layout, const AttentionOutput &output);
  /// Stores head firstHead + g's feature d from the block's max m (in base-2
  /// units, as the split kernels' scores), sum l and accumulator acc.
  void storeAttentionResult(const AttentionOutput &o, Value g, Value d, Value m, Value l,
                            Value acc);
  /// bf16 decode attention on tensor cores (a group of at most 16 query
  /// heads): the step's generated tokens, block row i for token
  /// generated_rows[i] (its last argument; partial results compact, a row
  /// per generated token). DecodeAttentionKernel.cpp.
  Kernel decodeAttentionKernel(attn::AttentionOp op, int64_t layersInGroup, int64_t qStride);
  /// What decodeAttentionKernel's lanes share: the layer's shape, the keys
  /// of this warp and how a key's pool rows are found.
  struct DecodeWarp {
    PagedPool paged;
    int64_t group = 0, hd = 0;
    // The block's sequence (block-table row), KV head, this warp's keys
    // [lo, hi), the fragment coordinates g = lane / 4, c = lane % 4.
    Value seq, kvh, lo, hi, g, c;
    // The keys of a tile that this lane reads (offsets from its first key:
    // g and 8 + g for K, 2c, 2c + 1, 2c + 8, 2c + 9 for V), each divided by
    // the block size: (offBlocks, offSlots); (stepBlocks, stepSlots)
    // the same of kDecodeKeyTile; (lastBlock, lastSlot) of the token's own
    // position, read for keys past hi.
    SmallVector<Value> offsets, offBlocks, offSlots;
    Value stepBlocks, stepSlots, lastBlock, lastSlot;
  };
  /// The tile's K and V words this lane holds, for the tile at key j0 whose
  /// cursor (table index, slot) is (tb, ts): K of keys g and 8 + g (hd / 8
  /// words each), then V of keys 2c, 2c + 1, 2c + 8, 2c + 9 (hd / 16 each).
  /// Token t's q of the group's heads (firstHead on) as mma A fragments,
  /// one per 16 features.
  SmallVector<SmallVector<Value>> decodeQueryFragments(const DecodeWarp &w, Value q, Value t,
                                                       Value firstHead, int64_t qStride);
  SmallVector<Value> decodeTileWords(const DecodeWarp &w, Value j0, Value tb, Value ts);
  /// One tile's online-softmax step: S = Q K^T, P, O += P V.
  SmallVector<Value> decodeTileUpdate(const DecodeWarp &w, ArrayRef<SmallVector<Value>> qFrag,
                                      ArrayRef<Value> words, Value j0, ValueRange state);
  /// Stores the warp's result (m, l, O of its rows' heads) through
  /// storeAttentionResult.
  void decodeStoreWarp(const DecodeWarp &w, ValueRange state, const AttentionOutput &output);
  /// Which rows a merge kernel combines (`splits` partials each, an
  /// argument): every token of the step, the generated ones (block row i:
  /// token generated_rows[i]), or the prompt tokens of a step whose prefill
  /// attention split the keys (generated tokens skipped by their flags).
  Kernel attentionMergeKernel(Type e, int64_t heads, int64_t hd, KernelRows rows);
  /// The token of block row `row`: generated_rows[row] (the kernel's last
  /// argument) with generatedOnly, else row itself.
  Value tokenOfRow(bool generatedOnly, Value row);
  Kernel prefillAttentionKernel(attn::AttentionOp op, int64_t layersInGroup,
                                     int64_t qStride);
  /// What the phases of prefillAttentionKernel share: the layer's shape, the
  /// kernel's arguments, the staged key tile and this lane's place.
  struct PrefillBlock {
    std::optional<int64_t> window;
    int64_t heads = 0, hd = 0, qStride = 0, threads = 0;
    // 16-byte units of a key's K (or V) row, and of its row in `tile`.
    int64_t keyQuads = 0, rowQuads = 0;
    PagedPool paged;
    Value q, positions, seqs, out, partial, generated, splits;
    // Shared memory: the key tile's K rows, then its V rows.
    Value tile;
    // The tile's first token, the block's split, KV head and query head,
    // the fragment coordinates g = lane / 4 and c = lane % 4, and how many
    // of the step's tokens the tile holds.
    Value tileBase, split, kvh, h, g, c, rowsInTile;
    // This lane's rows g and g + 8: the row, whether it is stored (a prompt
    // token of the step), its token and position.
    Value row[2], valid[2], token[2], pos[2];
    /// 16-byte units of a staged tile's K (or V) rows.
    int64_t tileUnits() const { return kPrefillKeyTile * keyQuads; }
    /// Rounds in which the block's threads load a tile's units.
    int64_t stageRounds() const { return (tileUnits() + threads - 1) / threads; }
  };
  /// A run of the tile's rows of one sequence, and the keys its split reads.
  struct PrefillRun {
    // The run's end row (exclusive), its sequence, whether this lane's rows are in it.
    Value end, seq, inRun[2];
    // The keys the run's rows see lie in [lo, last]; this split's key tiles
    // start in [splitLo, splitHi).
    Value lo, last, splitLo, splitHi;
  };
  /// The block's coordinates and this lane's rows of the step's `tokens`.
  void prefillLaneRows(PrefillBlock &k, int64_t group, Value tokens);
  /// This lane's Q rows as mma A fragments, one per 16 features.
  SmallVector<SmallVector<Value>> prefillQueryFragments(const PrefillBlock &k);
  /// The loop over the tile's runs; returns the state (m[2], l[2], O) after.
  ValueRange prefillRuns(const PrefillBlock &k, ArrayRef<SmallVector<Value>> qFrag);
  /// The run starting at tile row `start`: its extent and this split's keys.
  PrefillRun prefillRun(const PrefillBlock &k, Value start);
  /// The loop over a split's key tiles, from `state`; returns the state after.
  ValueRange prefillKeyTiles(const PrefillBlock &k, const PrefillRun &run,
                             ArrayRef<SmallVector<Value>> qFrag, ValueRange state);
  /// Element offset of key j's K (kv = 0) or V (kv = 1) row for this KV head
  /// (keys outside [lo, last], never seen, read an in-range key).
  Value prefillKeyOffset(const PrefillBlock &k, const PrefillRun &run, Value j, int64_t kv);
  /// This thread's 16-byte units of key tile kt, loaded into registers.
  SmallVector<Value> prefillStageLoad(const PrefillBlock &k, const PrefillRun &run, Value kt);
  /// Stores the units of prefillStageLoad into the shared tile.
  void prefillStageStore(const PrefillBlock &k, ValueRange units);
  /// S = Q K^T of key tile kt, scaled and masked: a C fragment per 8 keys.
  SmallVector<SmallVector<Value>> prefillScores(const PrefillBlock &k, const PrefillRun &run,
                                                ArrayRef<SmallVector<Value>> qFrag, Value kt);
  /// The online softmax step over S as C fragments (state: m[2], l[2] of
  /// this lane's rows g and g + 8, then O): turns S into P in place, returns
  /// the state rescaled. Scores in natural units, or base 2 with `base2`.
  SmallVector<Value> softmaxTileUpdate(ValueRange state, MutableArrayRef<SmallVector<Value>> sTile,
                                       bool base2);
  /// O += P V over P's keys (16 per two C fragments), O as C fragments, one
  /// per 8 features: vWords(key) gives the hd / 16 words of V this lane
  /// reads of key (2c + key) of the tile (features g hd/8 + [0, hd/8)).
  void accumulatePV(ArrayRef<SmallVector<Value>> pTile,
                    function_ref<SmallVector<Value>(int64_t)> vWords, MutableArrayRef<Value> o);
  /// Stores O / l (one split) or the partial result (m, l, O) of this lane's rows.
  void prefillStoreResult(const PrefillBlock &k, ValueRange state);
  /// Two f32 rounded to bf16 in one register, lo in the low half.
  Value packF32(Value lo, Value hi);
  /// `count` words (bf16 pairs) from word `first` of the staged K (kv = 0)
  /// or V (kv = 1) row of the tile's key `key`: 16-byte loads where count is
  /// a multiple of 4 (first then is too), else the words of one 16-byte unit
  /// (count 2 at an even first: V with head_dim 32, the one head size below
  /// 64 that convert-attn-to-gpu admits).
  SmallVector<Value> tileWords(const PrefillBlock &k, int64_t kv, Value key, Value first,
                               int64_t count);
  /// tileWords' words from the 16-byte units of `mem` from unit rowQuad on.
  SmallVector<Value> quadWords(Value mem, Value rowQuad, Value first, int64_t count);
  /// (lo's half, hi's half) of two words in one: the low halves, or the high ones.
  Value lowHalves(Value lo, Value hi);
  Value highHalves(Value lo, Value hi);
  /// d = a b + c for one m16n8k16 tile (bf16 operands); c and the result as 4 f32.
  SmallVector<Value> mma(ArrayRef<Value> a, ArrayRef<Value> bReg, ArrayRef<Value> c);
  /// `outType`: bf16 or f32.
  Kernel gemvKernel(bool fp8, int64_t n, int64_t k, Type outType);
  Kernel swigluKernel(Type e, int64_t width, int64_t gateStride, int64_t upStride);
  Kernel residualKernel(TypeRange inputs, Type result, int64_t width);
  Kernel gatherRowsKernel(Type e, int64_t width);
  /// logits [rows, vocab] f32 -> tokens [rows] i32 (greedy_rows blocks).
  Kernel greedyTokensKernel(int64_t vocab);
  Kernel quantizeKernel(Type input, int64_t width);
  Kernel layerNormQuantKernel(Type input, Type normType, int64_t hidden, double eps);
  Kernel swigluQuantKernel(Type e, int64_t width, int64_t gateStride,
                                int64_t upStride);
  SmallVector<RowPair> emitLayerNorm(Value in, Value w, Value rowBase, int64_t hidden,
                                     double eps);
  // Seeded random weights (WeightFillKernels.cpp, lib/Artifact/RandomWeights.h).
  /// u(seed, i) in [-1, 1) as f64; seed and i are i64.
  Value randomUniform(Value seed, Value i);
  /// f32(offset + scale * u(seed, i)), scale and offset f64.
  Value randomWeight(Value seed, Value i, Value scale, Value offset);
  /// `element`: f32 or bf16.
  Kernel randomUniformKernel(Type element);
  Kernel randomUniformFP8Kernel();
  /// The fill kernel of each storage dtype among the module's weights, named
  /// by the plan.step's "plan.weight_fill" attribute (dtype -> kernel).
  void generateWeightFills();

  // --- lowering of the attn ops ----------------------------------------------
  /// The launches of one attn op (a result gets its buffer before any
  /// kernel of the op runs, so no kernel writes a buffer it reads).
  LogicalResult lowerOp(Operation &op);
  /// The GEMM of one linear layer, or of a merged group (layout order), and
  /// the matrix-vector kernel that replaces it in steps of one token.
  void lowerLinears(ArrayRef<Operation *> group);
  LogicalResult lowerAttention(attn::AttentionOp op);
  void lowerLogits(attn::LogitsOp op);

  // --- plan ------------------------------------------------------------------
  /// A new buffer of `width` elements of `dtype` per row, as many rows as
  /// the step parameter `rows` says (plan-reuse-buffers shares them later).
  std::string allocate(int64_t width, Type dtype, StepParam rows = StepParam::Tokens);
  /// The buffer holding `v`, allocated for it.
  PlanArg bufferFor(Value v);
  /// The row stride (elements) of the buffer a view is in.
  int64_t strideOf(const PlanArg &view) const { return bufferWidths.at(view.name); }
  void kernelStep(const Kernel &kernel, StepParam gridX, int64_t gridY, int64_t block,
                  ArrayRef<PlanArg> args);
  /// `scales`: an FP8 GEMM's weight scales and a's per-token scales.
  void gemmStep(PlanArg a, PlanArg c, StringRef weight, StepParam m, int64_t n, int64_t k,
                double alpha, std::optional<std::pair<StringRef, PlanArg>> scales = {});
  /// `a` as an argument of a plan.launch or plan.gemm.
  Attribute argAttr(const PlanArg &a);
  /// A builder appending steps to the plan.step.
  OpBuilder planEnd() { return OpBuilder::atBlockEnd(&planStep.getBody().front()); }

  ModuleOp module;
  gpu::GPUModuleOp kernels;
  plan::StepOp planStep;
  std::map<std::string, bool> generated;
  // The kernel being generated.
  gpu::GPUFuncOp kernel;
  Value threadId, scratch;
  int64_t blockThreads = 0;
  // The buffer view of each value, and the width of each buffer.
  DenseMap<Value, PlanArg> buffers;
  std::map<std::string, int64_t> bufferWidths;
  // The last plan.buffer declared (the next goes after it).
  Operation *lastBuffer = nullptr;
};

} // namespace mlir::cohere2c::attn_to_gpu

#endif // COHERE2C_CONVERSION_ATTNTOGPU_KERNELGENERATOR_H
