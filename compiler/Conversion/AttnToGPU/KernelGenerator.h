//===- KernelGenerator.h - convert-attn-to-gpu kernels and plan -*- C++ -*-===//
//
// The generator behind convert-attn-to-gpu (AttnToGPU.h): it writes one
// gpu.func per specialized kernel into a gpu.module and records the step as
// a plan.step (PlanRecorder.h). Kernels take flat pointers (bare-pointer
// memrefs of a static, nominal size) and compute in f32 whatever the
// storage type. Formulas: docs/ARCHITECTURE.md, "The model", as in the host
// lowering (AttnToHost.cpp). The kernels are defined by family:
// RowKernels.cpp (embedding, norms, quantization, SwiGLU, residuals, row
// gathers), KVAppendKernel.cpp, SplitAttentionKernel.cpp (attention on
// CUDA cores and the merge of splits), DecodeAttentionKernel.cpp and
// PrefillAttentionKernel.cpp (attention on tensor cores, with the fragments
// of MmaFragments.cpp), LinearKernels.cpp (linear layers of one
// token), WeightFillKernels.cpp (seeded random weights); the lowering of
// each attn op to launches in AttnToGPU.cpp. What the families build with
// (rows, reductions, the paged pool) is in KernelPrimitives.h.
//
//===----------------------------------------------------------------------===//
#ifndef COHERE2C_CONVERSION_ATTNTOGPU_KERNELGENERATOR_H
#define COHERE2C_CONVERSION_ATTNTOGPU_KERNELGENERATOR_H

#include "Conversion/AttnToGPU/KernelPrimitives.h"
#include "Conversion/AttnToGPU/PlanRecorder.h"
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

// KernelSpec, PlanArg and StepParam: PlanRecorder.h.
using ::cohere2c::KernelFamily;
using ::cohere2c::KernelRows;
using ::cohere2c::kMaxDecodeSplits;
using ::cohere2c::kMaxPrefillSplits;
using ::cohere2c::kMinPrefillSplitKeyTiles;
using ::cohere2c::kPrefillKeyTile;
using ::cohere2c::kPrefillTileTokens;
using ::cohere2c::PlanInput;
using plan::dtypeOf;

/// The nominal size of a flat kernel argument: bare-pointer kernel
/// arguments need a static shape; only the pointer is passed.
inline constexpr int64_t kFlat = int64_t(1) << 40;
inline constexpr int64_t kChunkThreads = 256;  // elementwise kernels: threads per chunk
inline constexpr int64_t kAttentionWarps = 4; // split attention on CUDA cores: warps per block
inline constexpr int64_t kKeysInFlight = 4;    // decode attention: keys a lane group loads at once
// Decode attention: lanes that share a key's dot product (head_dim / kKeyLanes features each),
// so that a warp computes kKeySubgroups keys at once and reduces each over 4 shuffles, not 5
// for one key.
inline constexpr int64_t kKeyLanes = 16;
inline constexpr int64_t kAttentionBlocksPerSM = 3; // decode attention: ptxas's register bound
inline constexpr int64_t kDecodeKeyTile = 16;       // decode attention on tensor cores: keys a step
inline constexpr int64_t kDecodeBlocksPerSM = 8;    // ... (one warp each) and its register bound
inline constexpr int64_t kKeySubgroups = kWarp / kKeyLanes;
// Tensor-core attention's online softmax: how far (base 2) a row's maximum
// may pass its reference before the reference moves and O is rescaled
// (softmaxTileUpdate): weights up to 2^8.
inline constexpr double kLazyRescaleLog2 = 8.0;
// Prefill attention: warps an SM that ptxas's register bound makes room for
// (168 registers a thread: 3 blocks of Command R7B's 4 warps, where 2 fit at
// the 238 it takes unbounded).
inline constexpr int64_t kPrefillWarpsPerSM = 12;
/// Bytes of one of the prefill attention kernel's two shared buffers: a key
/// tile's K and V rows, each row padded by one 16-byte unit.
inline int64_t prefillBufferBytes(int64_t hd) {
  return 2 * kPrefillKeyTile * (hd / 8 + 1) * 16;
}
/// Static shared memory a kernel may declare (48 KiB; more takes dynamic
/// shared memory and an opt-in).
inline constexpr int64_t kStaticSharedBytes = 48 * 1024;
/// Whether the prefill attention kernel's two buffers fit static shared
/// memory: head_dim up to 128 (up to 184 in multiples of 8).
inline bool prefillFits(int64_t hd) {
  return 2 * prefillBufferBytes(hd) <= kStaticSharedBytes;
}
inline constexpr int64_t kGemvWarps = 8; // one-token linear layers: warps per block
// sample_tokens: threads per logits row, and the loads a thread has in
// flight on a greedy row and on a row sampled at a temperature.
inline constexpr int64_t kSampleThreads = 1024;
inline constexpr int64_t kGreedyRowLoads = 8;
inline constexpr int64_t kSampledRowLoads = 2;

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

/// Blocks of a step of one token's row kernel that splits the row (each
/// block kTokenSliceWidth values at most, its amax taken by gridMax): the
/// fewest in [2, kMaxGridBlocks] that divide `width` into even slices; 1
/// where none does (the one-block kernel serves it).
inline constexpr int64_t kTokenSliceWidth = 4 * kChunkThreads;
inline int64_t tokenRowBlocks(int64_t width) {
  for (int64_t blocks = std::max<int64_t>(2, width / kTokenSliceWidth); blocks <= kMaxGridBlocks;
       ++blocks)
    if (width % (2 * blocks) == 0 && width / blocks <= kTokenSliceWidth)
      return blocks;
  return 1;
}
/// Threads of each of those blocks: a thread a pair of the slice, in whole
/// warps (the block reductions shuffle over full warps; loadRow masks the
/// pairs past the slice), kChunkThreads at most.
inline int64_t tokenRowThreads(int64_t width, int64_t blocks) {
  int64_t pairs = width / blocks / 2;
  return std::min(kChunkThreads, (pairs + kWarp - 1) / kWarp * kWarp);
}

/// "_<what>stride<stride>" in a kernel's name where a row stride is not the
/// row's own width (a view into a merged GEMM's output).
inline std::string strideSuffix(const std::string &what, int64_t stride, int64_t width) {
  return stride == width ? "" : "_" + what + "stride" + std::to_string(stride);
}

/// "_v<unit>" in a kernel's name where its threads load `unit` values at once.
inline std::string unitSuffix(int64_t unit) {
  return unit > 2 ? "_v" + std::to_string(unit) : "";
}
/// rowThreads of a row loaded by units of `unit` values: as many threads as
/// rowThreads gives a row of pairs, a thread a unit; so a thread holds up to
/// unit / 2 times rowThreads' 8 pairs (14,336 values: 256 threads of 56,
/// no spills), loaded by as many loads as before.
inline int64_t unitRowThreads(int64_t width, int64_t unit) {
  return rowThreads(width * 2 / unit);
}

/// Threads of a KV append block: a pair index of a head each on RoPE
/// layers (hd / 2), kChunkThreads otherwise.
inline int64_t kvAppendThreads(bool rope, int64_t hd) {
  assert(hd / 2 <= 1024 && "a block has at most 1024 threads");
  return rope ? hd / 2 : kChunkThreads;
}
/// Blocks of kChunkThreads covering `width` elements.
inline int64_t chunksOf(int64_t width) { return (width + kChunkThreads - 1) / kChunkThreads; }

/// Generates kernels into one gpu.module and records the step's launches
/// into a plan.step (PlanRecorder).
class KernelGenerator : KernelPrimitives, PlanRecorder {
public:
  KernelGenerator(ModuleOp module, gpu::GPUModuleOp kernels, plan::StepOp planStep)
      : KernelPrimitives(module.getLoc(), module.getContext()),
        PlanRecorder(planStep, kernels, builder), module(module), kernels(kernels) {}

  LogicalResult run(func::FuncOp step);

private:
  using Kernel = GeneratedKernel;
  // --- kernels ---------------------------------------------------------------
  MemRefType flat(Type element) { return MemRefType::get({kFlat}, element); }
  /// Values of `e` a row kernel's thread loads at once from rows of `width`
  /// read through `views` (and written densely): a 16-byte unit
  /// (vectorUnit) where every row start and view column is a multiple of
  /// it (plan buffers start 256-byte aligned), else `fallback`.
  int64_t rowUnit(Type e, int64_t width, ArrayRef<PlanArg> views,
                  int64_t fallback) const;
  /// Whether every row start and column of `views` is a multiple of `unit`
  /// values (plan buffers start 256-byte aligned).
  bool viewsAligned(ArrayRef<PlanArg> views, int64_t unit) const;
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
  // kernels then read; with `pairUnit` 2 it moves a pair in one access (the
  // caller found q, k and v aligned for it), with 1 a value an access.
  Kernel kvAppendKernel(Type e, attn::AttentionOp op, int64_t layersInGroup,
                        int64_t kStride, int64_t vStride, int64_t qStride,
                        int64_t pairUnit);
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
  /// The cursor (table index, slot) = (j / block size, j % block size) of
  /// key j (index or i32, as the block size): the one division by the block
  /// size a cursor costs.
  std::pair<Value, Value> cursorOf(Value j, Value blockSize);
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
  /// The partial result alone: acc unnormalized, m (in the merge's units,
  /// natural log) and l with feature d = 0.
  void storeAttentionPartial(const AttentionOutput &o, Value g, Value d,
                             Value m, Value l, Value acc);
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
    PoolBytes bytes;
    // The block's KV head and the fragment coordinates g = lane / 4,
    // c = lane % 4 (index); the rest is i32 (PoolBytes): this warp's keys
    // [lo, hi), the sequence's block-table row times the table width.
    Value kvh, g, c, lo, hi, tableRow;
    // The keys of a tile that this lane reads (offsets from its first key:
    // g and 8 + g for K, 2c, 2c + 1, 2c + 8, 2c + 9 for V), each divided by
    // the block size: (offBlocks, offSlots), and the bytes it reads of each
    // row (inRows); (stepBlocks, stepSlots) the same of kDecodeKeyTile;
    // (lastBlock, lastSlot) of the token's own position, read for keys past
    // hi.
    SmallVector<Value> offsets, offBlocks, offSlots, inRows;
    Value stepBlocks, stepSlots, lastBlock, lastSlot;
  };
  /// Token t's q of the group's heads (firstHead on) as mma A fragments,
  /// one per 16 features.
  SmallVector<SmallVector<Value>> decodeQueryFragments(const DecodeWarp &w, Value q, Value t,
                                                       Value firstHead, int64_t qStride);
  /// The tile's K and V words this lane holds, for the tile at key j0 whose
  /// cursor (table index, slot) is (tb, ts), all i32: K of keys g and 8 + g
  /// (hd / 8 words each), then V of keys 2c, 2c + 1, 2c + 8, 2c + 9 (hd / 16
  /// each).
  SmallVector<Value> decodeTileWords(const DecodeWarp &w, Value j0, Value tb, Value ts);
  /// One tile's online-softmax step (j0 i32): S = Q K^T, P, O += P V.
  SmallVector<Value> decodeTileUpdate(const DecodeWarp &w, ArrayRef<SmallVector<Value>> qFrag,
                                      ArrayRef<Value> words, Value j0, ValueRange state);
  /// Stores the warp's result (m, l, O of its rows' heads): with one split
  /// O / l, as O times 1 / l (within an f32 ulp of the quotient, before the
  /// bf16 rounding), each lane's contiguous features 16 bytes at a time;
  /// else the partial results (storeAttentionPartial). The branch is the
  /// warp's, taken once.
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
  /// kernel's arguments, the key tiles' shared buffers and this lane's place.
  struct PrefillBlock {
    std::optional<int64_t> window;
    int64_t heads = 0, hd = 0, qStride = 0, threads = 0;
    // 16-byte units of a key's K (or V) row, and of its row in shared memory.
    int64_t keyQuads = 0, rowQuads = 0;
    PagedPool paged;
    Value q, positions, seqs, out, partial, generated, splits;
    // Shared memory: two buffers of a key tile, each its K rows, then its V
    // rows (rowQuads units each), and its address (i32, shared state space).
    Value tile, tileAddress;
    // The pool, addressed by the copies in 32-bit arithmetic.
    PoolBytes bytes;
    // The tile's first token, the block's split, KV head and query head,
    // the fragment coordinates g = lane / 4 and c = lane % 4, and how many
    // of the step's tokens the tile holds.
    Value tileBase, split, kvh, h, g, c, rowsInTile;
    // This lane's rows g and g + 8: the row, whether it is stored (a prompt
    // token of the step), its token and position.
    Value row[2], valid[2], token[2], pos[2];
    // The copies' i32 values: the keys of a tile this thread copies,
    // copyKey + i keysPerRound() in round i; the bytes of its 16-byte unit
    // within a pool row (its KV head's features) and the shared address of
    // its first copy (key copyKey's K row, buffer 0); the (table index,
    // slot) cursor steps of keysPerRound() and of kPrefillKeyTile keys.
    Value copyKey, copyInRow, copyTo, roundStep[2], tileStep[2];
    int64_t keysPerRound() const { return threads / keyQuads; }
    /// Rounds in which the block's threads copy a tile's rows.
    int64_t copyRounds() const {
      return (kPrefillKeyTile + keysPerRound() - 1) / keysPerRound();
    }
    int64_t bufferBytes() const { return prefillBufferBytes(hd); }
  };
  /// A run of the tile's rows of one sequence, and the keys its split reads.
  struct PrefillRun {
    // The run's end row (exclusive), whether this lane's rows are in it.
    Value end, inRun[2];
    // The keys the run's rows see lie in [lo, last]; this split's key tiles
    // start in [splitLo, splitHi).
    Value lo, last, splitLo, splitHi;
    // For the copies, as i32: the sequence's block-table row times the
    // table width; lo and last, and their cursors (table index, slot), which
    // keys outside [lo, last] copy (never seen, but V's rows must hold
    // finite values: P V multiplies them by 0).
    Value tableRow, copyLo, copyLast, loCursor[2], lastCursor[2];
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
  /// Starts the copies of key tile kt's K and V rows into shared buffer
  /// `buffer` (0 or 1) as one cp.async group; `cursor` is key kt + copyKey's
  /// (table index, slot), so that no copy divides by the block size.
  void prefillCopyTile(const PrefillBlock &k, const PrefillRun &run, Value kt,
                       ArrayRef<Value> cursor, Value buffer);
  /// S = Q K^T of key tile kt (raw scores, masked to -inf where a row does
  /// not see a key): a C fragment per 8 keys. `kAddress`: the shared
  /// address of this lane's ldmatrix row among the buffer's K rows.
  SmallVector<SmallVector<Value>>
  prefillScores(const PrefillBlock &k, const PrefillRun &run,
                ArrayRef<SmallVector<Value>> qFrag, Value kt, Value kAddress);
  /// The online softmax step over S as C fragments (state: m[2], l[2] of
  /// this lane's rows g and g + 8, then O): turns S into P in place, returns
  /// the state rescaled. P = 2^(S log2Scale - m log2Scale): scores already
  /// in base 2 with log2Scale 1, raw dot products with log2(e) / sqrt(hd);
  /// m, the rows' reference maxima, stays in the scores' units and moves
  /// only when a row's maximum passes it by kLazyRescaleLog2 (base 2), so
  /// P <= 2^kLazyRescaleLog2. O's rescale is skipped when no row of the
  /// warp moved (its factor then is exactly 1): a branch the warp takes
  /// together, past the first tile rarely taken.
  SmallVector<Value>
  softmaxTileUpdate(ValueRange state, MutableArrayRef<SmallVector<Value>> sTile,
                    double log2Scale);
  /// O += P V over P's keys (16 per two C fragments), O as C fragments, one
  /// per 8 features: vFragments(kk) gives the mma B registers of keys
  /// [16 kk, 16 kk + 16) of P, two per feature tile ([fb][2] flat).
  void accumulatePV(ArrayRef<SmallVector<Value>> pTile,
                    function_ref<SmallVector<Value>(int64_t)> vFragments,
                    MutableArrayRef<Value> o);
  /// Stores O / l (one split) or the partial result (m, l, O) of this lane's rows.
  void prefillStoreResult(const PrefillBlock &k, ValueRange state);
  /// Two f32 rounded to bf16 in one register, lo in the low half.
  Value packF32(Value lo, Value hi);
  /// Four 8x8 matrices of 16-bit elements from shared memory
  /// (ldmatrix.x4, transposed with `transpose`): lane i gives the address of
  /// row i % 8 of matrix i / 8; register r holds this lane's pair of matrix r.
  SmallVector<Value> loadMatrices(Value address, bool transpose);
  /// `count` words (bf16 pairs) at global `address` (i64): 16-byte loads
  /// where count is a multiple of 4 (the address then 16-byte aligned), else
  /// one 8-byte load (count 2: decode's V with head_dim 32, the one head size
  /// below 64 that convert-attn-to-gpu admits).
  SmallVector<Value> wordsAt(Value address, int64_t count);
  /// (lo's half, hi's half) of two words in one: the low halves, or the high ones.
  Value lowHalves(Value lo, Value hi);
  Value highHalves(Value lo, Value hi);
  /// d = a b + c for one m16n8k16 tile (bf16 operands); c and the result as 4 f32.
  SmallVector<Value> mma(ArrayRef<Value> a, ArrayRef<Value> bReg, ArrayRef<Value> c);
  /// `outType`: bf16 or f32; `addend`: an f32 row added before the store.
  Kernel gemvKernel(bool fp8, int64_t n, int64_t k, Type outType, bool addend);
  /// `unit`: values a thread loads at once (rowUnit).
  Kernel swigluKernel(Type e, int64_t width, int64_t gateStride,
                      int64_t upStride, int64_t unit);
  Kernel residualKernel(TypeRange inputs, Type result, int64_t width);
  Kernel gatherRowsKernel(Type e, int64_t width);
  /// logits [rows, vocab] f32, temperatures [rows] f32, noise seeds [rows]
  /// i64 -> tokens [rows] i32 (sampled_rows blocks).
  Kernel sampleTokensKernel(int64_t vocab);
  Kernel quantizeKernel(Type input, int64_t width);
  Kernel layerNormQuantKernel(Type input, Type normType, int64_t hidden, double eps);
  /// `unit` (even): values a thread loads at once (rowUnit).
  Kernel swigluQuantKernel(Type e, int64_t width, int64_t gateStride,
                           int64_t upStride, int64_t unit);
  /// swigluQuantKernel for a step of one token, its row split over
  /// `blocks` blocks (tokenRowBlocks).
  Kernel swigluQuantTokenKernel(Type e, int64_t width, int64_t gateStride, int64_t upStride,
                                int64_t blocks);
  SmallVector<RowPair> emitLayerNorm(Value in, Value w, Value rowBase, int64_t hidden,
                                     double eps);
  // Random streams (RandomStreams.cpp; lib/Artifact/SplitMix64.h): seed and
  // i are i64.
  Value i64Constant(uint64_t v);
  /// splitMix64(seed, i), i64.
  Value splitMix64(Value seed, Value i);
  /// u(seed, i) in [-1, 1) as f64 (RandomWeights.h).
  Value randomUniform(Value seed, Value i);
  /// gumbelNoise(seed, i) as f64 (GumbelNoise.h).
  Value gumbelNoise(Value seed, Value i);
  // Seeded random weights (WeightFillKernels.cpp,
  // lib/Artifact/RandomWeights.h).
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
  /// the matrix-vector kernel that replaces it in steps of one token. With
  /// `sum`, the one layer's product plus sum->addend goes into sum->out.
  struct SumInto {
    PlanArg addend, out;
  };
  void lowerLinears(ArrayRef<Operation *> group,
                    std::optional<SumInto> sum = std::nullopt);
  /// A residual sum whose summands are linear layers (foldedSummands): each
  /// layer's product is added into the sum's buffer as it is computed.
  void lowerFoldedSum(attn::ResidualSumOp op, ArrayRef<Operation *> summands);
  LogicalResult lowerAttention(attn::AttentionOp op);
  void lowerLogits(attn::LogitsOp op);

  ModuleOp module;
  gpu::GPUModuleOp kernels;
  std::map<std::string, bool> generated;
};

} // namespace mlir::cohere2c::attn_to_gpu

#endif // COHERE2C_CONVERSION_ATTNTOGPU_KERNELGENERATOR_H
