//===- AttnToGPU.cpp - attn step -> gpu kernels and a launch plan ---------===//
//
// Every attn op but the linear layers becomes a launch of a kernel generated
// here, specialized by the op's shapes and attributes (a full layer's kernels
// have no rotary code and no window bound); linear layers and the logits
// projection become GEMMs the runtime runs with cuBLASLt. Kernels that are
// specialized alike are generated once (all sliding layers share one
// attention kernel; the layer's KV slot is an argument).
//
// Kernels take flat pointers (bare-pointer memrefs of a static, nominal
// size) and compute in f32 whatever the storage type. Formulas: DESIGN.md,
// "The model, exactly", as in the host lowering (AttnToHost.cpp).
//
//===----------------------------------------------------------------------===//

#include "Conversion/AttnToGPU/AttnToGPU.h"

#include "Conversion/KVCachePlacement.h"
#include "Conversion/RotaryAngle.h"
#include "Frontend/ModelToAttn.h"
#include "cohere2c/Dialect/Attn/IR/Attn.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/ImplicitLocOpBuilder.h"
#include "llvm/ADT/TypeSwitch.h"

#include <cmath>
#include <limits>
#include <map>
#include <tuple>

namespace mlir::cohere2c {
#define GEN_PASS_DEF_CONVERTATTNTOGPU
#include "Conversion/Passes.h.inc"
} // namespace mlir::cohere2c

using namespace mlir;
using namespace mlir::cohere2c;
using ::cohere2c::DType;
using ::cohere2c::LaunchPlan;
using ::cohere2c::PlanArg;
using ::cohere2c::PlanBuffer;
using ::cohere2c::PlanStep;
using ::cohere2c::kPrefillKeyTile;
using ::cohere2c::kPrefillTileTokens;

namespace {

/// The nominal size of a flat kernel argument: bare-pointer kernel
/// arguments need a static shape; only the pointer is passed.
constexpr int64_t kFlat = int64_t(1) << 40;
constexpr int64_t kChunkThreads = 256;  // elementwise kernels: threads per chunk
constexpr int64_t kReduceScratch = 32;  // block reductions: a float per warp
constexpr int64_t kAttentionWarps = 16; // attention: warps per (token, head)
constexpr int64_t kKeysInFlight = 4;    // attention: keys a warp loads at once
constexpr int64_t kAttentionSplits = 4; // attention: blocks per (token, head)
constexpr int64_t kWarp = 32;

DType dtypeOf(Type t) {
  if (isa<Float8E4M3FNType>(t))
    return DType::F8E4M3;
  if (t.isBF16())
    return DType::BF16;
  if (t.isF16())
    return DType::F16;
  return DType::F32;
}

std::string sanitize(std::string s) {
  for (char &c : s)
    if (!isalnum((unsigned char)c))
      c = '_';
  return s;
}

PlanArg buffer(const std::string &name) {
  return {PlanArg::Kind::Buffer, name, 0};
}
PlanArg weightArg(StringRef name) {
  return {PlanArg::Kind::Weight, name.str(), 0};
}
PlanArg input(const std::string &name) {
  return {PlanArg::Kind::Input, name, 0};
}
PlanArg param(const std::string &name) {
  return {PlanArg::Kind::Param, name, 0};
}
PlanArg constant(int64_t v) { return {PlanArg::Kind::Int, "", v}; }

/// Threads of a kernel holding a row of `width` values in registers: a power
/// of two in [32, 1024], at most 8 pairs per thread below 16384 values.
int64_t rowThreads(int64_t width) {
  int64_t threads = kWarp;
  while (threads < 1024 && threads * 16 < width)
    threads *= 2;
  return threads;
}

/// "_<what>stride<stride>" in a kernel's name where a row stride is not the
/// row's own width (a view into a merged GEMM's output).
std::string strideSuffix(const std::string &what, int64_t stride, int64_t width) {
  return stride == width ? "" : "_" + what + "stride" + std::to_string(stride);
}

/// Blocks of kChunkThreads covering `width` elements.
int64_t chunksOf(int64_t width) { return (width + kChunkThreads - 1) / kChunkThreads; }

/// Generates kernels into one gpu.module and records the launch plan.
class KernelGenerator {
public:
  KernelGenerator(ModuleOp module, gpu::GPUModuleOp kernels)
      : module(module), kernels(kernels),
        b(module.getLoc(), module.getContext()) {}

  LogicalResult run(func::FuncOp step);
  LaunchPlan plan;

private:
  // --- arithmetic helpers (f32 compute, E storage) --------------------------
  Value index(int64_t v) { return arith::ConstantIndexOp::create(b, v); }
  Value f32(double v) { return arith::ConstantOp::create(b, b.getF32FloatAttr(v)); }
  Value add(Value x, Value y) { return arith::AddIOp::create(b, x, y); }
  Value mul(Value x, Value y) { return arith::MulIOp::create(b, x, y); }
  Value addf(Value x, Value y) { return arith::AddFOp::create(b, x, y); }
  Value mulf(Value x, Value y) { return arith::MulFOp::create(b, x, y); }
  Value subf(Value x, Value y) { return arith::SubFOp::create(b, x, y); }
  Value toIndex(Value v) {
    return arith::IndexCastOp::create(b, b.getIndexType(), v);
  }
  /// Loads element i of a flat memref as f32 (or as is for integers).
  Value load(Value mem, Value i) {
    Value v = memref::LoadOp::create(b, mem, ValueRange{i});
    if (isa<FloatType>(v.getType()) && !v.getType().isF32())
      v = arith::ExtFOp::create(b, b.getF32Type(), v);
    return v;
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
      v = combine(v, gpu::ShuffleOp::create(b, v, offset, kWarp, gpu::ShuffleMode::XOR)
                         .getShuffleResult());
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
  /// Quantizes row t (held in registers) to FP8 rowwise:
  /// scale = max(amax / 448, 1 / (448 * 512)); each pair (x[2j], x[2j+1])
  /// becomes one i16 of two e4m3 bytes through cvt.rn.satfinite.e4m3x2.f32.
  /// The quotient x / scale is formed in f64, as the reference does, so that
  /// exact halfway cases round to even as there.
  void emitRowQuantize(Value t, int64_t width, ArrayRef<RowPair> row, Value pairs,
                       Value scales) {
    Type f64 = b.getF64Type();
    auto wide = [&](Value v) { return arith::ExtFOp::create(b, f64, v); };
    auto f64c = [&](double v) { return arith::ConstantOp::create(b, b.getF64FloatAttr(v)); };
    Value amax = reduceRow(mapRow(row, [&](Value x, Value) { return math::AbsFOp::create(b, x); }),
                           [&](Value x, Value y) { return arith::MaximumFOp::create(b, x, y); });
    Value scale = arith::MaximumFOp::create(b, arith::DivFOp::create(b, wide(amax), f64c(448)),
                                            f64c(1.0 / (448.0 * 512.0)));
    Value first = arith::CmpIOp::create(b, arith::CmpIPredicate::eq, threadId, index(0));
    ifThen(first, [&] {
      memref::StoreOp::create(b, arith::TruncFOp::create(b, b.getF32Type(), scale),
                              scales, ValueRange{t});
    });
    auto quotient = [&](Value x) {
      return arith::TruncFOp::create(b, b.getF32Type(), arith::DivFOp::create(b, wide(x), scale));
    };
    forEachPair(row, [&](const RowPair &p) {
      // The first operand lands in the upper byte (MLIR-NOTES): pass
      // (x[2j+1], x[2j]) to store the bytes in order.
      Value packed = NVVM::ConvertF32x2ToF8x2Op::create(
          b, b.getI16Type(), quotient(p.x1), quotient(p.x0), NVVM::FPRoundingMode::RN,
          NVVM::SaturationMode::SATFINITE, false, Float8E4M3FNType::get(b.getContext()));
      memref::StoreOp::create(b, packed, pairs,
                              ValueRange{add(mul(t, index(width / 2)), p.pair)});
    });
  }
  /// v rounded to `type` (as an unfused op storing it would), as f32.
  Value roundTo(Value v, Type type) {
    if (type.isF32())
      return v;
    Value narrow = arith::TruncFOp::create(b, type, v);
    return arith::ExtFOp::create(b, b.getF32Type(), narrow);
  }

  // --- kernels ---------------------------------------------------------------
  MemRefType flat(Type element) { return MemRefType::get({kFlat}, element); }
  /// Starts kernel `name` (returns false if it exists: generate nothing).
  /// `scratchFloats` > 0 gives the kernel that many f32 of shared memory.
  bool beginKernel(const std::string &name, ArrayRef<Type> args, int64_t threads,
                   int64_t scratchFloats);
  void endKernel();

  std::string embeddingKernel(Type table, Type result, int64_t hidden);
  std::string layerNormKernel(Type input, Type e, int64_t hidden, double eps);
  // Kernels reading projections take their row strides: a projection can be
  // a column range of a merged GEMM's output.
  std::string kvAppendKernel(Type e, attn::AttentionOp op, int64_t layersInGroup,
                             int64_t kStride, int64_t vStride);
  // generatedOnly: the kernel takes the step's "generated_rows" as its last
  // argument and computes those tokens only, block row i for token
  // generated_rows[i] (partial results compact: a row per generated token).
  std::string attentionKernel(Type e, attn::AttentionOp op, int64_t layersInGroup,
                              int64_t qStride, bool generatedOnly);
  std::string attentionMergeKernel(Type e, int64_t heads, int64_t hd, bool generatedOnly);
  /// The token of block row `row`: generated_rows[row] (the kernel's last
  /// argument) with generatedOnly, else row itself.
  Value tokenOfRow(bool generatedOnly, Value row);
  std::string prefillAttentionKernel(attn::AttentionOp op, int64_t layersInGroup,
                                     int64_t qStride);
  std::string swigluKernel(Type e, int64_t width, int64_t gateStride, int64_t upStride);
  std::string residualKernel(TypeRange inputs, Type result, int64_t width);
  std::string gatherRowsKernel(Type e, int64_t width);
  std::string quantizeKernel(Type input, int64_t width);
  std::string layerNormQuantKernel(Type input, Type normType, int64_t hidden, double eps);
  std::string swigluQuantKernel(Type e, int64_t width, int64_t gateStride,
                                int64_t upStride);
  SmallVector<RowPair> emitLayerNorm(Value in, Value w, Value rowBase, int64_t hidden,
                                     double eps);

  // --- plan ------------------------------------------------------------------
  /// A buffer of `width` elements per row, from the free list of its shape.
  std::string allocate(int64_t width, DType dtype, const std::string &rows = "tokens");
  /// The buffer holding `v`, allocated for it.
  PlanArg bufferFor(Value v);
  /// The row stride (elements) of the buffer a view is in.
  int64_t strideOf(const PlanArg &view) const;
  /// Ends a value's use of its buffer: a buffer is free once no view of it
  /// is live.
  void release(Value v);
  void kernelStep(const std::string &kernel, std::string gridX, int64_t gridY,
                  int64_t block, std::vector<PlanArg> args) {
    PlanStep s;
    s.kernel = kernel;
    s.gridXParam = std::move(gridX);
    s.gridY = gridY;
    s.blockX = block;
    s.args = std::move(args);
    plan.steps.push_back(std::move(s));
  }
  void gemmStep(PlanArg a, PlanArg c, StringRef weight, std::string m, int64_t n,
                int64_t k, double alpha) {
    PlanStep s;
    s.kind = PlanStep::Kind::Gemm;
    s.args = {std::move(a), std::move(c)};
    s.weight = weight.str();
    s.mParam = std::move(m);
    s.n = n;
    s.k = k;
    s.alpha = alpha;
    plan.steps.push_back(std::move(s));
  }

  ModuleOp module;
  gpu::GPUModuleOp kernels;
  ImplicitLocOpBuilder b;
  std::map<std::string, bool> generated;
  // The kernel being generated.
  gpu::GPUFuncOp kernel;
  Value threadId, scratch;
  int64_t blockThreads = 0;
  // Buffer allocation: value -> its view of a buffer, live views per
  // buffer, and free buffers per (width, dtype).
  DenseMap<Value, PlanArg> buffers;
  std::map<std::string, int> liveViews;
  std::map<std::tuple<int64_t, int, std::string>, std::vector<std::string>> freeBuffers;
};

bool KernelGenerator::beginKernel(const std::string &name, ArrayRef<Type> args,
                                  int64_t threads, int64_t scratchFloats) {
  if (generated[name])
    return false;
  generated[name] = true;
  b.setInsertionPointToEnd(kernels.getBody());
  SmallVector<Type> workgroup;
  if (scratchFloats > 0)
    workgroup.push_back(MemRefType::get(
        {scratchFloats}, b.getF32Type(), MemRefLayoutAttrInterface{},
        gpu::AddressSpaceAttr::get(b.getContext(), gpu::AddressSpace::Workgroup)));
  kernel = gpu::GPUFuncOp::create(b, name, b.getFunctionType(args, {}), workgroup);
  kernel->setAttr(gpu::GPUDialect::getKernelFuncAttrName(), b.getUnitAttr());
  kernel.setKnownBlockSizeAttr(b.getDenseI32ArrayAttr({(int32_t)threads, 1, 1}));
  b.setInsertionPointToStart(&kernel.getBody().front());
  blockThreads = threads;
  threadId = gpu::ThreadIdOp::create(b, gpu::Dimension::x);
  scratch = Value();
  if (scratchFloats > 0)
    scratch = kernel.getWorkgroupAttributions()[0];
  return true;
}

void KernelGenerator::endKernel() { gpu::ReturnOp::create(b); }

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

// Writes K (rotated on RoPE layers) and V of each token into its block of
// the paged cache. A block per (token, chunk of feature pairs).
// Pool layout: [blocks][layers of the group][K, V][block size][KV heads][hd].
std::string KernelGenerator::kvAppendKernel(Type e, attn::AttentionOp op,
                                            int64_t groupLayers, int64_t kStride,
                                            int64_t vStride) {
  auto rope = dyn_cast<attn::RopeAttr>(op.getPosition());
  int64_t heads = op.getNumHeads(), kvHeads = op.getNumKvHeads(), hd = op.getHeadDim();
  std::string name = sanitize(
      "kv_append_" + std::string(rope ? "rope" : "no_rope") + "_h" +
      std::to_string(heads) + "_kv" + std::to_string(kvHeads) + "_d" +
      std::to_string(hd) + "_l" + std::to_string(groupLayers) +
      strideSuffix("k", kStride, kvHeads * hd) + strideSuffix("v", vStride, kvHeads * hd));
  Type i32 = b.getI32Type(), i64 = b.getI64Type();
  // k, v, positions, seqs, tables, pool, slot, block_size, table_width
  if (!beginKernel(name, {flat(e), flat(e), flat(i32), flat(i32), flat(i32), flat(e), i64,
                          i64, i64},
                   kChunkThreads, 0))
    return name;
  Value k = kernel.getArgument(0), v = kernel.getArgument(1);
  Value positions = kernel.getArgument(2), seqs = kernel.getArgument(3),
        tables = kernel.getArgument(4), pool = kernel.getArgument(5);
  Value slot = toIndex(kernel.getArgument(6)), bs = toIndex(kernel.getArgument(7)),
        width = toIndex(kernel.getArgument(8));
  Value t = gpu::BlockIdOp::create(b, gpu::Dimension::x);
  Value p32 = memref::LoadOp::create(b, positions, ValueRange{t});
  Value p = toIndex(p32), s = toIndex(load(seqs, t));
  Value block = toIndex(load(tables, add(mul(s, width), arith::DivUIOp::create(b, p, bs))));
  Value inBlock = arith::RemUIOp::create(b, p, bs);
  int64_t kvWidth = kvHeads * hd;
  auto base = [&](int64_t kv) {
    Value plane = add(mul(add(mul(block, index(groupLayers)), slot), index(2)), index(kv));
    return mul(add(mul(plane, bs), inBlock), index(kvWidth));
  };
  Value kBase = base(0), vBase = base(1);
  Value kRow = mul(t, index(kStride)), vRow = mul(t, index(vStride));
  double theta = rope ? rope.getTheta().convertToDouble() : 0;
  // Pair i is (x[2m], x[2m+1]) of head i / (hd/2), m = i % (hd/2).
  forChunkElement(kvWidth / 2, [&](Value i) {
    Value even = mul(i, index(2)), odd = add(even, index(1));
    auto copy = [&](Value src, Value srcRow, Value dstBase, Value d) {
      memref::StoreOp::create(b, memref::LoadOp::create(b, src, ValueRange{add(srcRow, d)}),
                              pool, ValueRange{add(dstBase, d)});
    };
    copy(v, vRow, vBase, even);
    copy(v, vRow, vBase, odd);
    if (!rope) {
      copy(k, kRow, kBase, even);
      copy(k, kRow, kBase, odd);
      return;
    }
    auto [c, sn] = emitRotaryCosSin(b, theta, hd, p32, arith::RemUIOp::create(b, i, index(hd / 2)));
    Value x0 = load(k, add(kRow, even)), x1 = load(k, add(kRow, odd));
    store(subf(mulf(x0, c), mulf(x1, sn)), pool, add(kBase, even));
    store(addf(mulf(x1, c), mulf(x0, sn)), pool, add(kBase, odd));
  });
  endKernel();
  return name;
}

// Attention as in flash-decoding (Dao et al., 2023): the keys a token sees
// (j <= p, and p - W < j on sliding layers; only blocks in that range are
// read) are split into kAttentionSplits contiguous ranges, one block per
// (token, head, split), so that a decode step of one sequence still fills
// the GPU. A block's warps split its range again, each lane owning
// head_dim / 32 consecutive features; each warp runs an online softmax
// (Milakov and Gimelshein, 2018) over its keys, the block merges its warps
// in shared memory and writes its partial result (max m, sum l, and the
// unnormalized output acc[head_dim], f32) for attentionMergeKernel. A range
// with no keys writes m = -inf, l = 0, acc = 0.
Value KernelGenerator::tokenOfRow(bool generatedOnly, Value row) {
  if (!generatedOnly)
    return row;
  // The last argument (workgroup memory comes after the arguments).
  Value rows = kernel.getArgument(kernel.getFunctionType().getNumInputs() - 1);
  return toIndex(memref::LoadOp::create(b, rows, ValueRange{row}));
}

std::string KernelGenerator::attentionKernel(Type e, attn::AttentionOp op,
                                             int64_t groupLayers, int64_t qStride,
                                             bool generatedOnly) {
  std::optional<int64_t> window = op.getSlidingWindow();
  int64_t heads = op.getNumHeads(), kvHeads = op.getNumKvHeads(), hd = op.getHeadDim();
  int64_t perLane = hd / kWarp;
  std::string name = sanitize(
      "attention_" + (window ? "sliding" + std::to_string(*window) : std::string("full")) +
      "_h" + std::to_string(heads) + "_kv" + std::to_string(kvHeads) + "_d" +
      std::to_string(hd) + "_l" + std::to_string(groupLayers) +
      strideSuffix("q", qStride, heads * hd) + "_split" + std::to_string(kAttentionSplits) +
      (generatedOnly ? "_generated" : ""));
  Type i32 = b.getI32Type(), i64 = b.getI64Type();
  // Shared memory: each warp's running max and sum, then its accumulator.
  int64_t accOffset = 2 * kAttentionWarps;
  // q, positions, seqs, tables, pool, partial (f32), slot, block_size,
  // table_width[, generated_rows]
  SmallVector<Type> args = {flat(e), flat(i32), flat(i32), flat(i32), flat(e),
                            flat(b.getF32Type()), i64, i64, i64};
  if (generatedOnly)
    args.push_back(flat(i32));
  if (!beginKernel(name, args, kAttentionWarps * kWarp, accOffset + kAttentionWarps * hd))
    return name;
  Value q = kernel.getArgument(0), positions = kernel.getArgument(1),
        seqs = kernel.getArgument(2), tables = kernel.getArgument(3),
        pool = kernel.getArgument(4), out = kernel.getArgument(5);
  Value slot = toIndex(kernel.getArgument(6)), bs = toIndex(kernel.getArgument(7)),
        width = toIndex(kernel.getArgument(8));
  // The block's row of the partial results, and its token.
  Value row = gpu::BlockIdOp::create(b, gpu::Dimension::x);
  Value t = tokenOfRow(generatedOnly, row);
  Value y = gpu::BlockIdOp::create(b, gpu::Dimension::y);
  Value h = arith::DivUIOp::create(b, y, index(kAttentionSplits));
  Value split = arith::RemUIOp::create(b, y, index(kAttentionSplits));
  Value warp = arith::DivUIOp::create(b, threadId, index(kWarp));
  Value lane = arith::RemUIOp::create(b, threadId, index(kWarp));
  Value p = toIndex(load(positions, t)), s = toIndex(load(seqs, t));
  Value kvh = arith::DivUIOp::create(b, h, index(heads / kvHeads));
  Value first = index(0);
  if (window)
    first = arith::MaxSIOp::create(b, index(0), add(p, index(1 - *window)));
  Value end = add(p, index(1));
  // This block's keys: [blockLo, blockHi), a contiguous share of
  // [first, end); this warp's: [lo, hi), a contiguous share of that.
  Value blockShare = arith::CeilDivUIOp::create(b, arith::SubIOp::create(b, end, first),
                                                index(kAttentionSplits));
  Value blockLo = arith::MinUIOp::create(b, add(first, mul(split, blockShare)), end);
  Value blockHi = arith::MinUIOp::create(b, add(blockLo, blockShare), end);
  Value share = arith::CeilDivUIOp::create(b, arith::SubIOp::create(b, blockHi, blockLo),
                                           index(kAttentionWarps));
  Value lo = arith::MinUIOp::create(b, add(blockLo, mul(warp, share)), blockHi);
  Value hi = arith::MinUIOp::create(b, add(lo, share), blockHi);

  Value qBase = add(mul(t, index(qStride)), add(mul(h, index(hd)), mul(lane, index(perLane))));
  Value scale = f32(1.0 / std::sqrt((double)hd));
  SmallVector<Value> qv;
  for (int64_t i = 0; i < perLane; ++i)
    qv.push_back(load(q, add(qBase, index(i))));
  // RoPE layers rotate q here, in f32 (interleaved pairs: features 2m and
  // 2m+1, in one lane, or in lanes 2l and 2l+1 when a lane owns one).
  if (auto rope = dyn_cast<attn::RopeAttr>(op.getPosition())) {
    double theta = rope.getTheta().convertToDouble();
    Value p32 = memref::LoadOp::create(b, positions, ValueRange{t});
    if (perLane == 1) {
      Value partner = gpu::ShuffleOp::create(b, qv[0], 1, kWarp, gpu::ShuffleMode::XOR)
                          .getShuffleResult();
      auto [c, sn] = emitRotaryCosSin(b, theta, hd, p32, arith::DivUIOp::create(b, lane, index(2)));
      Value odd = arith::CmpIOp::create(b, arith::CmpIPredicate::eq,
                                        arith::RemUIOp::create(b, lane, index(2)), index(1));
      // even lane: x0 c - x1 s; odd lane: x1 c + x0 s.
      Value evenValue = subf(mulf(qv[0], c), mulf(partner, sn));
      Value oddValue = addf(mulf(qv[0], c), mulf(partner, sn));
      qv[0] = arith::SelectOp::create(b, odd, oddValue, evenValue);
    } else {
      for (int64_t i = 0; i < perLane; i += 2) {
        Value m = arith::DivUIOp::create(b, add(mul(lane, index(perLane)), index(i)), index(2));
        auto [c, sn] = emitRotaryCosSin(b, theta, hd, p32, m);
        Value x0 = qv[i], x1 = qv[i + 1];
        qv[i] = subf(mulf(x0, c), mulf(x1, sn));
        qv[i + 1] = addf(mulf(x1, c), mulf(x0, sn));
      }
    }
  }
  for (Value &x : qv)
    x = mulf(x, scale);
  int64_t kvWidth = kvHeads * hd;
  Value headOffset = add(mul(kvh, index(hd)), mul(lane, index(perLane)));
  SmallVector<Value> init = {f32(-std::numeric_limits<float>::infinity()), f32(0)};
  for (int64_t i = 0; i < perLane; ++i)
    init.push_back(f32(0));
  // kKeysInFlight keys per iteration: their table entries, K and V rows are
  // loaded independently, so a warp waits one memory latency per group of
  // keys, not per key. Keys past hi are read at hi - 1 and weigh nothing.
  auto loop = scf::ForOp::create(b, lo, hi, index(kKeysInFlight), init);
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToEnd(loop.getBody());
    Value j0 = loop.getInductionVar();
    ValueRange carried = loop.getRegionIterArgs();
    Value last = arith::SubIOp::create(b, hi, index(1));
    SmallVector<Value> dots, valid;
    SmallVector<SmallVector<Value>> values;
    for (int64_t u = 0; u < kKeysInFlight; ++u) {
      Value ju = add(j0, index(u));
      valid.push_back(arith::CmpIOp::create(b, arith::CmpIPredicate::ult, ju, hi));
      Value j = arith::MinUIOp::create(b, ju, last);
      Value block = toIndex(load(tables, add(mul(s, width), arith::DivUIOp::create(b, j, bs))));
      Value inBlock = arith::RemUIOp::create(b, j, bs);
      Value plane = mul(add(mul(block, index(groupLayers)), slot), index(2));
      Value kBase = add(mul(add(mul(plane, bs), inBlock), index(kvWidth)), headOffset);
      Value vBase = add(mul(add(mul(add(plane, index(1)), bs), inBlock), index(kvWidth)),
                        headOffset);
      Value dot = f32(0);
      for (int64_t i = 0; i < perLane; ++i)
        dot = addf(dot, mulf(qv[i], load(pool, add(kBase, index(i)))));
      dots.push_back(dot);
      values.emplace_back();
      for (int64_t i = 0; i < perLane; ++i)
        values.back().push_back(load(pool, add(vBase, index(i))));
    }
    for (int32_t offset = kWarp / 2; offset > 0; offset /= 2)
      for (Value &dot : dots)
        dot = addf(dot, gpu::ShuffleOp::create(b, dot, offset, kWarp, gpu::ShuffleMode::XOR)
                            .getShuffleResult());
    Value minusInf = f32(-std::numeric_limits<float>::infinity());
    Value m = carried[0], l = carried[1], mNew = m;
    for (int64_t u = 0; u < kKeysInFlight; ++u) {
      dots[u] = arith::SelectOp::create(b, valid[u], dots[u], minusInf);
      mNew = arith::MaximumFOp::create(b, mNew, dots[u]);
    }
    // mNew is finite: key j0 < hi is valid.
    Value correction = math::ExpOp::create(b, subf(m, mNew));
    SmallVector<Value> next = {mNew, mulf(l, correction)};
    for (int64_t i = 0; i < perLane; ++i)
      next.push_back(mulf(carried[2 + i], correction));
    for (int64_t u = 0; u < kKeysInFlight; ++u) {
      Value weight = math::ExpOp::create(b, subf(dots[u], mNew));
      next[1] = addf(next[1], weight);
      for (int64_t i = 0; i < perLane; ++i)
        next[2 + i] = addf(next[2 + i], mulf(weight, values[u][i]));
    }
    scf::YieldOp::create(b, next);
  }
  // Publish this warp's partial result.
  Value laneZero = arith::CmpIOp::create(b, arith::CmpIPredicate::eq, lane, index(0));
  ifThen(laneZero, [&] {
    memref::StoreOp::create(b, loop.getResult(0), scratch, ValueRange{warp});
    memref::StoreOp::create(b, loop.getResult(1), scratch,
                            ValueRange{add(warp, index(kAttentionWarps))});
  });
  Value accBase = add(index(accOffset), add(mul(warp, index(hd)), mul(lane, index(perLane))));
  for (int64_t i = 0; i < perLane; ++i)
    memref::StoreOp::create(b, loop.getResult(2 + i), scratch,
                            ValueRange{add(accBase, index(i))});
  gpu::BarrierOp::create(b);
  // Merge: thread d < head_dim combines feature d over the warps. A warp
  // with no keys has max -inf and sum 0 and contributes nothing; so does the
  // whole block when its range is empty (m = -inf, measured from 0).
  Value minusInf = f32(-std::numeric_limits<float>::infinity());
  Value partialBase =
      mul(add(mul(row, index(heads * kAttentionSplits)), y), index(hd + 2));
  forThreads(hd, [&](Value d) {
    Value m = minusInf;
    for (int64_t w = 0; w < kAttentionWarps; ++w)
      m = arith::MaximumFOp::create(b, m, memref::LoadOp::create(b, scratch, ValueRange{index(w)}));
    Value empty = arith::CmpFOp::create(b, arith::CmpFPredicate::OEQ, m, minusInf);
    Value from = arith::SelectOp::create(b, empty, f32(0), m);
    Value l = f32(0), acc = f32(0);
    for (int64_t w = 0; w < kAttentionWarps; ++w) {
      Value mw = memref::LoadOp::create(b, scratch, ValueRange{index(w)});
      Value lw = memref::LoadOp::create(b, scratch, ValueRange{index(kAttentionWarps + w)});
      Value c = math::ExpOp::create(b, subf(mw, from));
      l = addf(l, mulf(lw, c));
      Value aw = memref::LoadOp::create(
          b, scratch, ValueRange{add(index(accOffset + w * hd), d)});
      acc = addf(acc, mulf(aw, c));
    }
    memref::StoreOp::create(b, acc, out, ValueRange{add(partialBase, add(d, index(2)))});
    ifThen(arith::CmpIOp::create(b, arith::CmpIPredicate::eq, d, index(0)), [&] {
      memref::StoreOp::create(b, m, out, ValueRange{partialBase});
      memref::StoreOp::create(b, l, out, ValueRange{add(partialBase, index(1))});
    });
  });
  endKernel();
  return name;
}

// Combines a token's kAttentionSplits partial results per head (written by
// attentionKernel): out = sum_z acc_z e^(m_z - m) / sum_z l_z e^(m_z - m),
// m = max_z m_z (finite: the token sees at least itself, so some range is
// not empty).
// A block per (token, head), a thread per feature.
std::string KernelGenerator::attentionMergeKernel(Type e, int64_t heads, int64_t hd,
                                                  bool generatedOnly) {
  std::string name = sanitize("attention_merge_h" + std::to_string(heads) + "_d" +
                              std::to_string(hd) + "_split" +
                              std::to_string(kAttentionSplits) +
                              (generatedOnly ? "_generated" : ""));
  SmallVector<Type> args = {flat(b.getF32Type()), flat(e)};
  if (generatedOnly)
    args.push_back(flat(b.getI32Type()));
  if (!beginKernel(name, args, hd, 0))
    return name;
  Value partial = kernel.getArgument(0), out = kernel.getArgument(1);
  Value row = gpu::BlockIdOp::create(b, gpu::Dimension::x);
  Value t = tokenOfRow(generatedOnly, row);
  Value h = gpu::BlockIdOp::create(b, gpu::Dimension::y);
  Value d = threadId;
  auto base = [&](int64_t z) {
    return mul(add(mul(add(mul(row, index(heads)), h), index(kAttentionSplits)), index(z)),
               index(hd + 2));
  };
  Value m = f32(-std::numeric_limits<float>::infinity());
  for (int64_t z = 0; z < kAttentionSplits; ++z)
    m = arith::MaximumFOp::create(b, m, load(partial, base(z)));
  Value l = f32(0), acc = f32(0);
  for (int64_t z = 0; z < kAttentionSplits; ++z) {
    Value c = math::ExpOp::create(b, subf(load(partial, base(z)), m));
    l = addf(l, mulf(load(partial, add(base(z), index(1))), c));
    acc = addf(acc, mulf(load(partial, add(base(z), add(d, index(2)))), c));
  }
  store(arith::DivFOp::create(b, acc, l), out,
        add(mul(t, index(heads * hd)), add(mul(h, index(hd)), d)));
  endKernel();
  return name;
}

// Prefill attention on tensor cores, as in FlashAttention-2 (Dao, 2023): a
// block per (tile of kPrefillTileTokens tokens, KV head), a warp per query
// head of that KV head's group, so the group's warps read the same keys.
// A warp holds its 16 query rows (rotated on RoPE layers, rounded to bf16)
// as mma A fragments and walks the keys kPrefillKeyTile at a time:
// S = Q K^T and O += P V by mma.sync.m16n8k16 (bf16 operands, f32
// accumulators), with an online softmax per row in registers. The tile's
// tokens are taken in runs of one sequence; a run reads only the keys some
// of its rows see ([max(0, min p - W + 1), max p] on sliding layers,
// [0, max p] on full ones): blocks outside are skipped, keys inside masked
// per row (causal, window). Fragment layouts (PTX ISA, "Matrix fragments for
// mma.m16n8k16", g = lane / 4, c = lane % 4, each register a pair along k):
// A registers hold (g, 2c), (g + 8, 2c), (g, 2c + 8), (g + 8, 2c + 8);
// B registers (2c, g), (2c + 8, g); C holds (g, 2c), (g, 2c + 1),
// (g + 8, 2c), (g + 8, 2c + 1).
// Features are permuted so that a lane reads contiguous memory (a sum over
// features does not depend on their order, and the output is stored back in
// place): in S = Q K^T, step ks's k-index pair 2c (2c + 8) is feature pair
// c hd/4 + 4 ks (+ 2), so lane c reads hd/4 contiguous features of its key;
// in O = P V, column n of feature tile fb is feature n hd/8 + fb, so lane g
// reads hd/8 contiguous features of a key, and features fb = 2i and 2i + 1
// come from the low and high halves of its word i.
std::string KernelGenerator::prefillAttentionKernel(attn::AttentionOp op, int64_t groupLayers,
                                                    int64_t qStride) {
  std::optional<int64_t> window = op.getSlidingWindow();
  auto rope = dyn_cast<attn::RopeAttr>(op.getPosition());
  int64_t heads = op.getNumHeads(), kvHeads = op.getNumKvHeads(), hd = op.getHeadDim();
  int64_t group = heads / kvHeads, kvWidth = kvHeads * hd;
  std::string name = sanitize(
      "attention_prefill_" +
      (window ? "sliding" + std::to_string(*window) : std::string("full")) + "_h" +
      std::to_string(heads) + "_kv" + std::to_string(kvHeads) + "_d" + std::to_string(hd) +
      "_l" + std::to_string(groupLayers) + strideSuffix("q", qStride, heads * hd));
  Type bf16 = b.getBF16Type(), i32 = b.getI32Type(), i64 = b.getI64Type();
  Type f32t = b.getF32Type();
  // q, positions, seqs, tables, pool (as i32 pairs), pool (as 16-byte
  // vectors of pairs), out, slot, block_size, table_width, tokens, generated
  Type quad = VectorType::get({4}, i32);
  if (!beginKernel(name, {flat(bf16), flat(i32), flat(i32), flat(i32), flat(i32), flat(quad),
                          flat(bf16), i64, i64, i64, i64, flat(i32)},
                   group * kWarp, 0))
    return name;
  Value q = kernel.getArgument(0), positions = kernel.getArgument(1),
        seqs = kernel.getArgument(2), tables = kernel.getArgument(3),
        poolPairs = kernel.getArgument(4), poolQuads = kernel.getArgument(5),
        out = kernel.getArgument(6), generated = kernel.getArgument(11);
  Value slot = toIndex(kernel.getArgument(7)), bs = toIndex(kernel.getArgument(8)),
        width = toIndex(kernel.getArgument(9)), tokens = toIndex(kernel.getArgument(10));
  auto divu = [&](Value x, int64_t d) { return arith::DivUIOp::create(b, x, index(d)); };
  auto remu = [&](Value x, int64_t d) { return arith::RemUIOp::create(b, x, index(d)); };
  auto cmp = [&](arith::CmpIPredicate p, Value x, Value y) {
    return arith::CmpIOp::create(b, p, x, y);
  };
  auto andi = [&](Value x, Value y) { return arith::AndIOp::create(b, x, y); };
  auto maxf = [&](Value x, Value y) { return arith::MaximumFOp::create(b, x, y); };
  auto xorShuffle = [&](Value v, int32_t offset) {
    return gpu::ShuffleOp::create(b, v, offset, kWarp, gpu::ShuffleMode::XOR).getShuffleResult();
  };
  // Two f32 rounded to bf16 in one register, lo in the low half.
  auto packF32 = [&](Value lo, Value hi) {
    Value pair = NVVM::ConvertF32x2ToBF16x2Op::create(
        b, VectorType::get({2}, bf16), hi, lo, Value(),
        NVVM::FPRoundingModeAttr::get(b.getContext(), NVVM::FPRoundingMode::RN));
    return LLVM::BitcastOp::create(b, i32, pair).getResult();
  };
  // `count` words (bf16 pairs) of the pool from word `first`: 16-byte loads
  // where count is a multiple of 4 (first then is too), else 4-byte ones.
  auto loadWords = [&](Value first, int64_t count) {
    SmallVector<Value> words;
    if (count % 4 != 0) {
      for (int64_t i = 0; i < count; ++i)
        words.push_back(memref::LoadOp::create(b, poolPairs, ValueRange{add(first, index(i))}));
      return words;
    }
    Value at = divu(first, 4);
    for (int64_t v = 0; v < count / 4; ++v) {
      Value quadValue = memref::LoadOp::create(b, poolQuads, ValueRange{add(at, index(v))});
      for (int32_t i = 0; i < 4; ++i)
        words.push_back(LLVM::ExtractElementOp::create(
            b, quadValue, arith::ConstantIntOp::create(b, i, 32)));
    }
    return words;
  };
  // (lo's half, hi's half) of two words in one: the low halves, or the high ones.
  Value lowMask = arith::ConstantIntOp::create(b, 0xFFFF, 32);
  Value highMask = arith::ConstantIntOp::create(b, 0xFFFF0000LL, 32);
  Value sixteen = arith::ConstantIntOp::create(b, 16, 32);
  auto lowHalves = [&](Value lo, Value hi) {
    return arith::OrIOp::create(b, arith::AndIOp::create(b, lo, lowMask),
                                arith::ShLIOp::create(b, hi, sixteen)).getResult();
  };
  auto highHalves = [&](Value lo, Value hi) {
    return arith::OrIOp::create(b, arith::ShRUIOp::create(b, lo, sixteen),
                                arith::AndIOp::create(b, hi, highMask)).getResult();
  };
  Type accType = LLVM::LLVMStructType::getLiteral(b.getContext(), {f32t, f32t, f32t, f32t});
  // d = a b + c for one m16n8k16 tile; c and the result as 4 f32.
  auto mma = [&](ArrayRef<Value> a, ArrayRef<Value> bReg, ArrayRef<Value> c) {
    Value d = NVVM::MmaOp::create(b, accType, a, bReg, c, {16, 8, 16}, std::nullopt, std::nullopt,
                                  std::array<NVVM::MMATypes, 2>{NVVM::MMATypes::bf16,
                                                                NVVM::MMATypes::bf16},
                                  std::array<NVVM::MMALayout, 2>{NVVM::MMALayout::row,
                                                                 NVVM::MMALayout::col});
    SmallVector<Value> r;
    for (int64_t i = 0; i < 4; ++i)
      r.push_back(LLVM::ExtractValueOp::create(b, d, ArrayRef<int64_t>{i}));
    return r;
  };

  Value tileBase = mul(gpu::BlockIdOp::create(b, gpu::Dimension::x), index(kPrefillTileTokens));
  Value kvh = gpu::BlockIdOp::create(b, gpu::Dimension::y);
  Value h = add(mul(kvh, index(group)), divu(threadId, kWarp));
  Value lane = remu(threadId, kWarp), g = divu(lane, 4), c = remu(lane, 4);
  Value rowsInTile = arith::MinUIOp::create(b, arith::SubIOp::create(b, tokens, tileBase),
                                            index(kPrefillTileTokens));
  // This lane's rows of the tile: g and g + 8. A row past the step's
  // tokens reads row 0 of the tile; it and a generated token's row are
  // computed as no key's and not stored.
  Value row[2], valid[2], token[2], pos32[2], pos[2];
  for (int r = 0; r < 2; ++r) {
    row[r] = add(g, index(8 * r));
    valid[r] = cmp(arith::CmpIPredicate::ult, row[r], rowsInTile);
    token[r] = add(tileBase, arith::SelectOp::create(b, valid[r], row[r], index(0)));
    pos32[r] = memref::LoadOp::create(b, positions, ValueRange{token[r]});
    pos[r] = toIndex(pos32[r]);
    Value flag = memref::LoadOp::create(b, generated, ValueRange{token[r]});
    valid[r] = andi(valid[r], cmp(arith::CmpIPredicate::eq, flag,
                                  arith::ConstantIntOp::create(b, 0, 32)));
  }
  // Q as A fragments, one per 16 features.
  SmallVector<SmallVector<Value>> qFrag;
  for (int64_t ks = 0; ks < hd / 16; ++ks) {
    qFrag.emplace_back();
    for (int64_t reg = 0; reg < 4; ++reg) {
      int r = reg % 2;
      Value f = add(mul(c, index(hd / 4)), index(ks * 4 + (reg / 2) * 2));
      Value at = add(mul(token[r], index(qStride)), add(mul(h, index(hd)), f));
      Value x0 = load(q, at), x1 = load(q, add(at, index(1)));
      if (rope) {
        auto [cs, sn] = emitRotaryCosSin(b, rope.getTheta().convertToDouble(), hd, pos32[r],
                                         divu(f, 2));
        Value y0 = subf(mulf(x0, cs), mulf(x1, sn));
        x1 = addf(mulf(x1, cs), mulf(x0, sn));
        x0 = y0;
      }
      qFrag.back().push_back(packF32(x0, x1));
    }
  }

  // Running state per row r of this lane: max m[r], partial sum l[r] (over
  // this lane's columns), and O as C fragments, one per 8 features.
  Value minusInf = f32(-std::numeric_limits<float>::infinity());
  int64_t outTiles = hd / 8;
  SmallVector<Value> init = {minusInf, minusInf, f32(0), f32(0)};
  for (int64_t i = 0; i < outTiles * 4; ++i)
    init.push_back(f32(0));
  SmallVector<Type> stateTypes(init.size(), f32t);
  SmallVector<Value> whileInit = {index(0)};
  whileInit.append(init);
  SmallVector<Type> whileTypes = {b.getIndexType()};
  whileTypes.append(stateTypes);
  auto runs = scf::WhileOp::create(b, whileTypes, whileInit, nullptr, nullptr);
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToEnd(runs.getBeforeBody());
    Value more = cmp(arith::CmpIPredicate::ult, runs.getBeforeArguments()[0], rowsInTile);
    scf::ConditionOp::create(b, more, runs.getBeforeArguments());
  }
  {
  OpBuilder::InsertionGuard runGuard(b);
  b.setInsertionPointToEnd(runs.getAfterBody());
  Value runStart = runs.getAfterArguments()[0];
  // The run: rows [runStart, runEnd) of one sequence, positions in [minP, maxP].
  Value seq32 = memref::LoadOp::create(b, seqs, ValueRange{add(tileBase, runStart)});
  Value p0 = toIndex(load(positions, add(tileBase, runStart)));
  Value trueValue = arith::ConstantIntOp::create(b, 1, 1);
  auto scan = scf::ForOp::create(b, add(runStart, index(1)), rowsInTile, index(1),
                                 ValueRange{add(runStart, index(1)), trueValue, p0, p0});
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToEnd(scan.getBody());
    Value i = scan.getInductionVar();
    ValueRange st = scan.getRegionIterArgs();
    Value si = memref::LoadOp::create(b, seqs, ValueRange{add(tileBase, i)});
    Value pi = toIndex(load(positions, add(tileBase, i)));
    Value same = andi(st[1], cmp(arith::CmpIPredicate::eq, si, seq32));
    scf::YieldOp::create(
        b, ValueRange{arith::SelectOp::create(b, same, add(i, index(1)), st[0]), same,
                      arith::SelectOp::create(b, same, arith::MinUIOp::create(b, st[2], pi), st[2]),
                      arith::SelectOp::create(b, same, arith::MaxUIOp::create(b, st[3], pi), st[3])});
  }
  Value runEnd = scan.getResult(0), minP = scan.getResult(2), maxP = scan.getResult(3);
  Value seq = toIndex(seq32);
  Value inRun[2];
  for (int r = 0; r < 2; ++r)
    inRun[r] = andi(valid[r], andi(cmp(arith::CmpIPredicate::uge, row[r], runStart),
                                   cmp(arith::CmpIPredicate::ult, row[r], runEnd)));
  Value lo = index(0);
  if (window)
    lo = arith::MaxSIOp::create(b, index(0), add(minP, index(1 - *window)));
  Value hi = add(maxP, index(1)), last = maxP;
  // Key tiles start at multiples of kPrefillKeyTile, so that a row meets
  // the same tiles in the same order whatever else its run holds: keys a
  // row does not see change nothing of its state (exactly), and its result
  // does not depend on how the prompt was chunked or batched.
  Value firstTile = mul(divu(lo, kPrefillKeyTile), index(kPrefillKeyTile));
  // Element offset of key j's K (kv = 0) or V (kv = 1) row for this KV head
  // (keys outside [lo, hi), never seen, read an in-range key).
  auto keyBase = [&](Value j, int64_t kv) {
    Value jc = arith::MinUIOp::create(b, arith::MaxUIOp::create(b, j, lo), last);
    Value block = toIndex(load(tables, add(mul(seq, width), arith::DivUIOp::create(b, jc, bs))));
    Value plane = add(mul(add(mul(block, index(groupLayers)), slot), index(2)), index(kv));
    return add(mul(add(mul(plane, bs), arith::RemUIOp::create(b, jc, bs)), index(kvWidth)),
               mul(kvh, index(hd)));
  };
  Value scale = f32(1.0 / std::sqrt((double)hd));
  auto keys = scf::ForOp::create(b, firstTile, hi, index(kPrefillKeyTile),
                                 ValueRange(runs.getAfterArguments()).drop_front());
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToEnd(keys.getBody());
    Value kt = keys.getInductionVar();
    ValueRange st = keys.getRegionIterArgs();
    // S = Q K^T for keys kt + 8 nb + [0, 8): this lane's B column is key
    // kt + 8 nb + g; its C columns are keys kt + 8 nb + 2c + {0, 1}.
    int64_t keyTiles = kPrefillKeyTile / 8;
    SmallVector<SmallVector<Value>> sTile;
    for (int64_t nb = 0; nb < keyTiles; ++nb) {
      Value kWord = add(divu(keyBase(add(kt, add(index(nb * 8), g)), 0), 2),
                        mul(c, index(hd / 8)));
      SmallVector<Value> words = loadWords(kWord, hd / 8);
      SmallVector<Value> acc(4, f32(0));
      for (int64_t ks = 0; ks < hd / 16; ++ks)
        acc = mma(qFrag[ks], {words[2 * ks], words[2 * ks + 1]}, acc);
      // Scale and mask: key j is seen by row r when r is in the run,
      // j <= p and, on sliding layers, p - W < j.
      for (int64_t i = 0; i < 4; ++i) {
        int r = i / 2;
        Value j = add(kt, add(index(nb * 8 + i % 2), mul(c, index(2))));
        Value seen = andi(inRun[r], cmp(arith::CmpIPredicate::ule, j, pos[r]));
        if (window)
          seen = andi(seen, cmp(arith::CmpIPredicate::ugt, add(j, index(*window)), pos[r]));
        acc[i] = arith::SelectOp::create(b, seen, mulf(acc[i], scale), minusInf);
      }
      sTile.push_back(acc);
    }
    // Online softmax per row (a row's columns are spread over 4 lanes).
    SmallVector<Value> next(st.begin(), st.end());
    Value from[2], alpha[2];
    for (int r = 0; r < 2; ++r) {
      Value m = st[r];
      for (auto &acc : sTile)
        m = maxf(m, maxf(acc[2 * r], acc[2 * r + 1]));
      m = maxf(m, xorShuffle(m, 1));
      m = maxf(m, xorShuffle(m, 2));
      // A row that has seen no key yet keeps m = -inf and weighs from 0.
      Value none = arith::CmpFOp::create(b, arith::CmpFPredicate::OEQ, m, minusInf);
      from[r] = arith::SelectOp::create(b, none, f32(0), m);
      alpha[r] = math::ExpOp::create(b, subf(st[r], from[r]));
      next[r] = m;
      next[2 + r] = mulf(st[2 + r], alpha[r]);
    }
    for (auto &acc : sTile)
      for (int64_t i = 0; i < 4; ++i) {
        acc[i] = math::ExpOp::create(b, subf(acc[i], from[i / 2]));
        next[2 + i / 2] = addf(next[2 + i / 2], acc[i]);
      }
    for (int64_t i = 0; i < outTiles * 4; ++i)
      next[4 + i] = mulf(st[4 + i], alpha[(i % 4) / 2]);
    // O += P V, 16 keys at a time: P's A fragment is two adjacent S tiles;
    // this lane's B rows are keys 2c + {0, 1} and 2c + 8 + {0, 1}.
    for (int64_t kk = 0; kk < keyTiles / 2; ++kk) {
      SmallVector<Value> a = {packF32(sTile[2 * kk][0], sTile[2 * kk][1]),
                              packF32(sTile[2 * kk][2], sTile[2 * kk][3]),
                              packF32(sTile[2 * kk + 1][0], sTile[2 * kk + 1][1]),
                              packF32(sTile[2 * kk + 1][2], sTile[2 * kk + 1][3])};
      Value j0 = add(kt, add(index(kk * 16), mul(c, index(2))));
      SmallVector<Value> v[4];
      int64_t step[4] = {0, 1, 8, 9};
      for (int i = 0; i < 4; ++i)
        v[i] = loadWords(add(divu(keyBase(add(j0, index(step[i])), 1), 2),
                             mul(g, index(hd / 16))),
                         hd / 16);
      for (int64_t fb = 0; fb < outTiles; ++fb) {
        int64_t w = fb / 2;
        auto halves = [&](Value lo, Value hi) {
          return fb % 2 == 0 ? lowHalves(lo, hi) : highHalves(lo, hi);
        };
        SmallVector<Value> bReg = {halves(v[0][w], v[1][w]), halves(v[2][w], v[3][w])};
        SmallVector<Value> o(next.begin() + 4 + fb * 4, next.begin() + 8 + fb * 4);
        o = mma(a, bReg, o);
        std::copy(o.begin(), o.end(), next.begin() + 4 + fb * 4);
      }
    }
    scf::YieldOp::create(b, next);
  }
  SmallVector<Value> yielded = {runEnd};
  yielded.append(keys.getResults().begin(), keys.getResults().end());
  scf::YieldOp::create(b, yielded);
  }

  // out = O / l, l summed over the row's 4 lanes.
  ValueRange result = runs.getResults().drop_front();
  for (int r = 0; r < 2; ++r) {
    Value l = result[2 + r];
    l = addf(l, xorShuffle(l, 1));
    l = addf(l, xorShuffle(l, 2));
    ifThen(valid[r], [&] {
      Value rowBase = add(mul(token[r], index(heads * hd)), mul(h, index(hd)));
      // Column 2c + j of feature tile fb is feature (2c + j) hd/8 + fb.
      for (int64_t fb = 0; fb < outTiles; ++fb)
        for (int64_t j = 0; j < 2; ++j)
          store(arith::DivFOp::create(b, result[4 + fb * 4 + r * 2 + j], l), out,
                add(rowBase, add(mul(add(mul(c, index(2)), index(j)), index(hd / 8)),
                                 index(fb))));
    });
  }
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

/// Elements per token of a step value: [tokens, width], or [tokens] scales.
int64_t widthOf(RankedTensorType type) {
  return type.getRank() == 2 ? type.getDimSize(1) : 1;
}

std::string KernelGenerator::allocate(int64_t width, DType dtype, const std::string &rows) {
  std::vector<std::string> &pool = freeBuffers[{width, (int)dtype, rows}];
  std::string name;
  if (!pool.empty()) {
    name = pool.back();
    pool.pop_back();
  } else {
    name = "b" + std::to_string(plan.buffers.size());
    plan.buffers.push_back({name, width, dtype, rows});
  }
  return name;
}

PlanArg KernelGenerator::bufferFor(Value v) {
  auto type = cast<RankedTensorType>(v.getType());
  std::string name = allocate(widthOf(type), dtypeOf(type.getElementType()));
  liveViews[name] = 1;
  return buffers[v] = buffer(name);
}

int64_t KernelGenerator::strideOf(const PlanArg &view) const {
  for (const PlanBuffer &buffer : plan.buffers)
    if (buffer.name == view.name)
      return buffer.width;
  return 0;
}

void KernelGenerator::release(Value v) {
  auto it = buffers.find(v);
  if (it == buffers.end() || --liveViews[it->second.name] > 0)
    return;
  for (const PlanBuffer &buffer : plan.buffers)
    if (buffer.name == it->second.name)
      freeBuffers[{buffer.width, (int)buffer.dtype, buffer.rowsParam}].push_back(buffer.name);
}

/// Linear layers that read the same input (and, for FP8, the same input
/// scales) and whose weights (and weight scales) lie back to back in the
/// weights file, in layout order: one GEMM computes them all into one
/// buffer, each result a column range of it. In the Cohere2 layout these
/// are q, k, v, gate and up.
std::vector<SmallVector<Operation *>> mergeableLinears(ModuleOp module, Block &body) {
  auto weightOp = [&](Operation *op, StringRef attr) {
    return SymbolTable::lookupNearestSymbolFrom<attn::WeightOp>(
        module, op->getAttrOfType<FlatSymbolRefAttr>(attr));
  };
  auto bytes = [](attn::WeightOp w) {
    auto t = cast<RankedTensorType>(w.getType());
    return t.getNumElements() * (int64_t)::cohere2c::dtypeSize(dtypeOf(t.getElementType()));
  };
  // Candidates by (input, input scales), in program order.
  std::map<std::pair<void *, void *>, SmallVector<Operation *>> byInput;
  std::vector<std::pair<void *, void *>> order;
  for (Operation &op : body) {
    std::pair<void *, void *> key;
    if (auto l = dyn_cast<attn::LinearOp>(op))
      key = {l.getInput().getAsOpaquePointer(), nullptr};
    else if (auto f = dyn_cast<attn::FP8LinearOp>(op))
      key = {f.getInput().getAsOpaquePointer(), f.getInputScales().getAsOpaquePointer()};
    else
      continue;
    if (!byInput.count(key))
      order.push_back(key);
    byInput[key].push_back(&op);
  }
  std::vector<SmallVector<Operation *>> groups;
  for (const auto &key : order) {
    SmallVector<Operation *> ops = byInput[key];
    if (ops.size() < 2)
      continue;
    llvm::sort(ops, [&](Operation *x, Operation *y) {
      return weightOp(x, "weight").getOffset() < weightOp(y, "weight").getOffset();
    });
    bool fp8 = key.second != nullptr, contiguous = true;
    for (size_t i = 1; i < ops.size() && contiguous; ++i) {
      for (StringRef attr : fp8 ? SmallVector<StringRef>{"weight", "weight_scale"}
                                : SmallVector<StringRef>{"weight"}) {
        attn::WeightOp prev = weightOp(ops[i - 1], attr), next = weightOp(ops[i], attr);
        contiguous &= next.getOffset() == prev.getOffset() + bytes(prev);
      }
      contiguous &= cast<RankedTensorType>(ops[i]->getResult(0).getType()).getElementType() ==
                    cast<RankedTensorType>(ops[0]->getResult(0).getType()).getElementType();
    }
    // Only kernels that take a row stride may read a column view: q, k, v of
    // attention and gate, up of SwiGLU.
    bool viewsReadable = llvm::all_of(ops, [](Operation *op) {
      return llvm::all_of(op->getResult(0).getUsers(), [](Operation *user) {
        return isa<attn::AttentionOp, attn::SwiGLUOp, attn::SwiGLUQuantOp>(user);
      });
    });
    if (contiguous && viewsReadable)
      groups.push_back(ops);
  }
  return groups;
}

LogicalResult KernelGenerator::run(func::FuncOp step) {
  Block &body = step.getBody().front();
  DenseMap<Value, Operation *> lastUse;
  for (Operation &op : body)
    for (Value operand : op.getOperands())
      lastUse[operand] = &op;
  auto weightOf = [&](FlatSymbolRefAttr ref) { return ref.getValue(); };
  // Ends the operands whose last use is `op` (each once, however often used).
  auto releaseOperands = [&](Operation *op) {
    SmallPtrSet<void *, 8> done;
    for (Value operand : op->getOperands())
      if (lastUse[operand] == op && done.insert(operand.getAsOpaquePointer()).second)
        release(operand);
  };
  // Row kernels (norms, quantization) hold a row as pairs of values.
  auto evenWidth = [&](Operation *op, int64_t width) -> LogicalResult {
    if (width % 2 == 0)
      return success();
    return op->emitOpError("the cuda target needs an even row width, found ") << width;
  };
  // A merged GEMM runs where the first of its linear layers was; the others
  // only name their column range of its output.
  DenseMap<Operation *, SmallVector<Operation *>> mergedAt;
  DenseSet<Operation *> merged;
  for (SmallVector<Operation *> &group : mergeableLinears(module, body)) {
    Operation *first = *llvm::min_element(
        group, [](Operation *x, Operation *y) { return x->isBeforeInBlock(y); });
    merged.insert(group.begin(), group.end());
    mergedAt[first] = std::move(group);
  }
  // The GEMM of one linear layer, or of a merged group (layout order): its
  // output is the result's buffer, or one buffer the results are column
  // views of. FP8: the weight's rowwise scales, the input's per-token ones.
  auto linearGemm = [&](ArrayRef<Operation *> group) {
    Value input = group[0]->getOperand(0);
    auto widthOf = [](Operation *op) {
      return cast<RankedTensorType>(op->getResult(0).getType()).getDimSize(1);
    };
    int64_t n = 0;
    for (Operation *op : group)
      n += widthOf(op);
    PlanArg out;
    if (group.size() == 1) {
      out = bufferFor(group[0]->getResult(0));
    } else {
      out = buffer(allocate(
          n, dtypeOf(cast<RankedTensorType>(group[0]->getResult(0).getType()).getElementType())));
      liveViews[out.name] = group.size();
      int64_t column = 0;
      for (Operation *op : group) {
        PlanArg view = out;
        view.column = column;
        view.width = widthOf(op);
        buffers[op->getResult(0)] = view;
        column += view.width;
      }
    }
    gemmStep(buffers[input], out,
             group[0]->getAttrOfType<FlatSymbolRefAttr>("weight").getValue(), "tokens", n,
             cast<RankedTensorType>(input.getType()).getDimSize(1), 1.0);
    if (auto fp8 = dyn_cast<attn::FP8LinearOp>(group[0])) {
      plan.steps.back().weightScale = weightOf(fp8.getWeightScaleAttr()).str();
      plan.steps.back().args.push_back(buffers[fp8.getInputScales()]);
    }
  };

  for (Operation &op : body) {
    if (isa<func::ReturnOp>(op))
      break;
    b.setLoc(op.getLoc());
    if (merged.count(&op)) {
      if (mergedAt.count(&op))
        linearGemm(mergedAt[&op]);
      releaseOperands(&op);
      continue;
    }
    // A result gets its buffer before the op's operands are released, so no
    // kernel writes a buffer it reads.
    LogicalResult result =
        llvm::TypeSwitch<Operation *, LogicalResult>(&op)
            .Case([&](attn::EmbeddingOp o) -> LogicalResult {
              auto type = cast<RankedTensorType>(o.getType());
              auto table = cast<RankedTensorType>(
                  SymbolTable::lookupNearestSymbolFrom<attn::WeightOp>(
                      module, o.getWeightAttr())
                      .getType());
              std::string k = embeddingKernel(table.getElementType(),
                                              type.getElementType(), type.getDimSize(1));
              kernelStep(k, "tokens", chunksOf(type.getDimSize(1)), kChunkThreads,
                         {input("ids"), weightArg(weightOf(o.getWeightAttr())),
                          bufferFor(o.getResult())});
              return success();
            })
            .Case([&](attn::LayerNormOp o) -> LogicalResult {
              auto type = cast<RankedTensorType>(o.getType());
              if (failed(evenWidth(o, type.getDimSize(1))))
                return failure();
              std::string k = layerNormKernel(
                  cast<RankedTensorType>(o.getInput().getType()).getElementType(),
                  type.getElementType(), type.getDimSize(1), o.getEps().convertToDouble());
              kernelStep(k, "tokens", 1, rowThreads(type.getDimSize(1)),
                         {buffers[o.getInput()],
                          weightArg(weightOf(o.getWeightAttr())),
                          bufferFor(o.getResult())});
              return success();
            })
            .Case<attn::LinearOp, attn::FP8LinearOp>([&](Operation *o) -> LogicalResult {
              linearGemm({o});
              return success();
            })
            .Case([&](attn::AttentionOp o) -> LogicalResult {
              // A lane owns head_dim / 32 features; RoPE pairs must not
              // straddle lanes: one feature per lane, or an even count.
              if (o.getHeadDim() != kWarp && o.getHeadDim() % (2 * kWarp) != 0)
                return o.emitOpError("the cuda target needs head_dim 32 or a "
                                     "multiple of 64, found ")
                       << o.getHeadDim();
              Type e = cast<RankedTensorType>(o.getType()).getElementType();
              KVCachePlacement placement = kvCachePlacementOf(o);
              int64_t layers = placement.layersInGroup;
              std::string group = placement.sliding ? "sliding" : "full";
              PlanArg tables = input(group + "_tables"), pool = input(group + "_pool");
              PlanArg slot = constant(placement.slot), bs = param("block_size"),
                      width = param(group + "_table_width");
              PlanArg q = buffers[o.getQ()], k = buffers[o.getK()], v = buffers[o.getV()];
              kernelStep(kvAppendKernel(e, o, layers, strideOf(k), strideOf(v)), "tokens",
                         chunksOf(o.getNumKvHeads() * o.getHeadDim() / 2), kChunkThreads,
                         {k, v, input("positions"), input("seqs"), tables, pool, slot, bs,
                          width});
              // bf16: generated tokens take the split kernel (a block per
              // generated token, head and split, listed by generated_rows),
              // prompt tokens the tensor-core kernel (it skips the others by
              // the generated flags). f32 runs the split kernel for every
              // token (mma would round q, k and v to bf16).
              int64_t heads = o.getNumHeads(), hd = o.getHeadDim();
              int64_t queriesPerKv = heads / o.getNumKvHeads();
              bool tensorCores = e.isBF16() && queriesPerKv <= 32;
              std::string splitTokens = tensorCores ? "decode_tokens" : "tokens";
              // Partial results [tokens, heads, splits, m l acc[hd]], f32.
              int64_t partialWidth = heads * kAttentionSplits * (hd + 2);
              std::string partial = allocate(partialWidth, DType::F32, splitTokens);
              PlanArg out = bufferFor(o.getResult());
              std::vector<PlanArg> splitArgs = {q, input("positions"), input("seqs"), tables,
                                                pool, buffer(partial), slot, bs, width};
              std::vector<PlanArg> mergeArgs = {buffer(partial), out};
              if (tensorCores) {
                splitArgs.push_back(input("generated_rows"));
                mergeArgs.push_back(input("generated_rows"));
              }
              kernelStep(attentionKernel(e, o, layers, strideOf(q), tensorCores), splitTokens,
                         heads * kAttentionSplits, kAttentionWarps * kWarp, splitArgs);
              kernelStep(attentionMergeKernel(e, heads, hd, tensorCores), splitTokens, heads, hd,
                         mergeArgs);
              freeBuffers[{partialWidth, (int)DType::F32, splitTokens}].push_back(partial);
              if (tensorCores)
                kernelStep(prefillAttentionKernel(o, layers, strideOf(q)), "prefill_tiles",
                           o.getNumKvHeads(), queriesPerKv * kWarp,
                           {q, input("positions"), input("seqs"), tables, pool, pool, out, slot,
                            bs, width, param("tokens"), input("generated")});
              return success();
            })
            .Case([&](attn::SwiGLUOp o) -> LogicalResult {
              auto type = cast<RankedTensorType>(o.getType());
              PlanArg gate = buffers[o.getGate()], up = buffers[o.getUp()];
              kernelStep(swigluKernel(type.getElementType(), type.getDimSize(1),
                                      strideOf(gate), strideOf(up)),
                         "tokens", chunksOf(type.getDimSize(1)), kChunkThreads,
                         {gate, up, bufferFor(o.getResult())});
              return success();
            })
            .Case([&](attn::ResidualSumOp o) -> LogicalResult {
              auto type = cast<RankedTensorType>(o.getType());
              std::vector<PlanArg> args;
              for (Value v : o.getInputs())
                args.push_back(buffers[v]);
              args.push_back(bufferFor(o.getResult()));
              SmallVector<Type> inputs;
              for (Value v : o.getInputs())
                inputs.push_back(cast<RankedTensorType>(v.getType()).getElementType());
              kernelStep(residualKernel(inputs, type.getElementType(), type.getDimSize(1)),
                         "tokens", chunksOf(type.getDimSize(1)), kChunkThreads, args);
              return success();
            })
            .Case([&](attn::QuantizeOp o) -> LogicalResult {
              auto in = cast<RankedTensorType>(o.getInput().getType());
              if (failed(evenWidth(o, in.getDimSize(1))))
                return failure();
              kernelStep(quantizeKernel(in.getElementType(), in.getDimSize(1)), "tokens", 1,
                         rowThreads(in.getDimSize(1)),
                         {buffers[o.getInput()], bufferFor(o.getValues()),
                          bufferFor(o.getScales())});
              return success();
            })
            .Case([&](attn::LayerNormQuantOp o) -> LogicalResult {
              auto in = cast<RankedTensorType>(o.getInput().getType());
              if (failed(evenWidth(o, in.getDimSize(1))))
                return failure();
              kernelStep(layerNormQuantKernel(in.getElementType(), o.getNormType(),
                                              in.getDimSize(1), o.getEps().convertToDouble()),
                         "tokens", 1, rowThreads(in.getDimSize(1)),
                         {buffers[o.getInput()], weightArg(weightOf(o.getWeightAttr())),
                          bufferFor(o.getValues()), bufferFor(o.getScales())});
              return success();
            })
            .Case([&](attn::SwiGLUQuantOp o) -> LogicalResult {
              auto in = cast<RankedTensorType>(o.getGate().getType());
              if (failed(evenWidth(o, in.getDimSize(1))))
                return failure();
              PlanArg gate = buffers[o.getGate()], up = buffers[o.getUp()];
              kernelStep(swigluQuantKernel(in.getElementType(), in.getDimSize(1),
                                           strideOf(gate), strideOf(up)),
                         "tokens", 1, rowThreads(in.getDimSize(1)),
                         {gate, up, bufferFor(o.getValues()), bufferFor(o.getScales())});
              return success();
            })
            .Case([&](attn::LogitsOp o) -> LogicalResult {
              auto in = cast<RankedTensorType>(o.getInput().getType());
              auto out = cast<RankedTensorType>(o.getType());
              std::string rows = "rows." + std::to_string(plan.buffers.size());
              plan.buffers.push_back(
                  {rows, in.getDimSize(1), dtypeOf(in.getElementType()), "rows"});
              kernelStep(gatherRowsKernel(in.getElementType(), in.getDimSize(1)), "rows",
                         chunksOf(in.getDimSize(1)), kChunkThreads,
                         {buffers[o.getInput()], input("logit_rows"), buffer(rows)});
              gemmStep(buffer(rows), input("logits"), weightOf(o.getWeightAttr()), "rows",
                       out.getDimSize(1), in.getDimSize(1),
                       o.getScale().convertToDouble());
              return success();
            })
            .Default([&](Operation *other) {
              return other->emitOpError("cannot be lowered to the cuda target");
            });
    if (failed(result))
      return failure();
    releaseOperands(&op);
  }
  return success();
}

struct ConvertAttnToGPUPass
    : public mlir::cohere2c::impl::ConvertAttnToGPUBase<ConvertAttnToGPUPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    auto step = module.lookupSymbol<func::FuncOp>(kStepFunctionName);
    if (!step) {
      module.emitError() << "no @" << kStepFunctionName << " to lower";
      return signalPassFailure();
    }
    OpBuilder b(module.getContext());
    b.setInsertionPointToEnd(module.getBody());
    auto kernels = gpu::GPUModuleOp::create(b, module.getLoc(), kKernelModuleName);
    module->setAttr(gpu::GPUDialect::getContainerModuleAttrName(), b.getUnitAttr());
    KernelGenerator generator(module, kernels);
    if (failed(generator.run(step)))
      return signalPassFailure();
    module->setAttr(kLaunchPlanAttrName, b.getStringAttr(generator.plan.toJson()));
    step.erase();
    for (auto w : llvm::make_early_inc_range(module.getOps<attn::WeightOp>()))
      w.erase();
  }
};

} // namespace
