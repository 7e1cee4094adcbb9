//===- AttnToHost.cpp - Lower the attn step function to host loops --------===//
//
// Each attn op becomes a loop nest over memrefs; every op result gets a
// buffer [T, features] that is freed after its last use. The arithmetic is
// f32 with sequential f32 accumulation; rotary angles are computed in f64.
// Formulas: docs/ARCHITECTURE.md, "The model"; checked against the float64
// reference logits of test/data/models (README.md there).
//
//===----------------------------------------------------------------------===//

#include "Conversion/AttnToHost/AttnToHost.h"

#include "Artifact/Precision.h"
#include "Conversion/KVCachePlacement.h"
#include "Conversion/QuantizedLinears.h"
#include "Conversion/RotaryAngle.h"
#include "Conversion/RowwiseFP8.h"
#include "Conversion/ScalarBuilders.h"
#include "Frontend/ModelToAttn.h"
#include "cohere2c/Dialect/Attn/IR/Attn.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/ImplicitLocOpBuilder.h"
#include "llvm/ADT/TypeSwitch.h"

#include <limits>

namespace mlir::cohere2c {
#define GEN_PASS_DEF_CONVERTATTNTOHOST
#include "Conversion/Passes.h.inc"
} // namespace mlir::cohere2c

using namespace mlir;
using namespace mlir::cohere2c;

namespace {

/// The arguments of the lowered step function, in ABI order.
enum StepArg {
  kWeights,
  kIds,
  kPositions,
  kSeqs,
  kKVTables,
  kKVPool,
  kLogitRows,
  kLogits,
  kBlockSize,
  kNumStepArgs
};

/// Where an attention layer keeps its K and V: its group (the index of its
/// block tables, an index value), its slot in the group, and the group's
/// number of layers.
struct CacheSlot {
  Value group;
  int64_t slot = 0, layersInGroup = 0;
};

class StepLowering : ScalarBuilders {
public:
  StepLowering(ImplicitLocOpBuilder &b, func::FuncOp step, ModuleOp module)
      : ScalarBuilders(b), step(step), module(module) {}

  LogicalResult run(func::FuncOp source);

private:
  // --- small builders (and ScalarBuilders') -------------------------------
  Value load(Value memref, ValueRange indices) {
    return memref::LoadOp::create(b, memref, indices);
  }
  void store(Value v, Value memref, ValueRange indices) {
    memref::StoreOp::create(b, v, memref, indices);
  }
  Value arg(StepArg a) { return step.getArgument(a); }

  /// for iv in [lb, ub): body(iv)
  void forLoop(Value lb, Value ub, function_ref<void(Value)> body) {
    auto loop = scf::ForOp::create(b, lb, ub, index(1));
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPoint(loop.getBody()->getTerminator());
    body(loop.getInductionVar());
  }
  /// acc = init; for iv in [lb, ub): acc = body(iv, acc); returns acc.
  Value reduce(Value lb, Value ub, Value init,
               function_ref<Value(Value, Value)> body) {
    auto loop = scf::ForOp::create(b, lb, ub, index(1), ValueRange{init});
    OpBuilder::InsertionGuard guard(b);
    Block *block = loop.getBody();
    b.setInsertionPointToEnd(block);
    Value next = body(loop.getInductionVar(), block->getArgument(1));
    scf::YieldOp::create(b, next);
    return loop.getResult(0);
  }
  /// sum over k in [0, n) of x[xRow, k] * w[wRow, k], in f32.
  Value dot(Value x, Value xRow, Value w, Value wRow, int64_t n) {
    return reduce(index(0), index(n), f32(0), [&](Value k, Value acc) {
      return addf(acc, mulf(load(x, {xRow, k}), load(w, {wRow, k})));
    });
  }

  /// A [T, features] (or [T] for scales) f32 buffer for an op result. FP8
  /// values are held as the f32 numbers they encode (exact).
  Value allocActivation(Value result) {
    auto type = cast<RankedTensorType>(result.getType());
    Type element = type.getElementType();
    if (isa<Float8E4M3FNType>(element))
      element = b.getF32Type();
    auto memrefType = MemRefType::get(type.getShape(), element);
    Value buffer = memref::AllocOp::create(b, memrefType, ValueRange{tokens});
    buffers[result] = buffer;
    return buffer;
  }
  /// The weight `name` viewed in the weights buffer at its offset (FP8
  /// weights as their bytes, i8; decode them with decodeE4M3).
  Value weight(FlatSymbolRefAttr name) {
    auto decl = SymbolTable::lookupNearestSymbolFrom<attn::WeightOp>(module, name);
    auto type = cast<RankedTensorType>(decl.getType());
    Type element = type.getElementType();
    if (isa<Float8E4M3FNType>(element))
      element = b.getI8Type();
    return memref::ViewOp::create(b, MemRefType::get(type.getShape(), element),
                                  arg(kWeights), index(decl.getOffset()),
                                  ValueRange{});
  }

  // --- FP8 e4m3fn (OCP 8-bit floating point: bias 7, 3 mantissa bits, no
  // infinities, S.1111.111 is NaN, largest finite 448) ----------------------
  /// The e4m3fn value nearest to v (ties to even), saturated to +-448.
  Value roundToE4M3(Value v) {
    Value a = arith::MinimumFOp::create(b, math::AbsFOp::create(b, v), f32(::cohere2c::kE4M3Max));
    // The binade's exponent, at least -6 (below it the spacing is that of
    // the subnormals, 2^-9); |v| = 0 gives -inf, clamped to -6.
    Value e = arith::MaximumFOp::create(
        b, math::FloorOp::create(b, math::Log2Op::create(b, a)), f32(-6));
    Value spacing = math::Exp2Op::create(b, subf(e, f32(3)));
    Value r = mulf(math::RoundEvenOp::create(b, arith::DivFOp::create(b, a, spacing)),
                   spacing);
    return math::CopySignOp::create(b, r, v);
  }
  /// The f32 value of an e4m3fn byte.
  Value decodeE4M3(Value byte) {
    Type i32 = b.getI32Type();
    auto c = [&](int64_t v) { return arith::ConstantIntOp::create(b, i32, v); };
    Value bits = arith::ExtUIOp::create(b, i32, byte);
    Value sign = arith::ShLIOp::create(b, arith::ShRUIOp::create(b, bits, c(7)), c(31));
    Value exponent = arith::AndIOp::create(b, arith::ShRUIOp::create(b, bits, c(3)), c(15));
    Value mantissa = arith::AndIOp::create(b, bits, c(7));
    // Normal: (1 + m/8) 2^(e-7), i.e. f32 exponent e - 7 + 127, mantissa m << 20.
    Value normalBits = arith::OrIOp::create(
        b, sign,
        arith::OrIOp::create(b,
                             arith::ShLIOp::create(b, arith::AddIOp::create(b, exponent, c(120)),
                                                   c(23)),
                             arith::ShLIOp::create(b, mantissa, c(20))));
    Value normal = arith::BitcastOp::create(b, b.getF32Type(), normalBits);
    // Subnormal: m 2^-9.
    Value magnitude = mulf(arith::UIToFPOp::create(b, b.getF32Type(), mantissa),
                           f32(1.0 / 512));
    Value subnormal = math::CopySignOp::create(
        b, magnitude, arith::BitcastOp::create(b, b.getF32Type(), sign));
    Value isSubnormal = arith::CmpIOp::create(b, arith::CmpIPredicate::eq, exponent, c(0));
    Value isNaN = arith::AndIOp::create(
        b, arith::CmpIOp::create(b, arith::CmpIPredicate::eq, exponent, c(15)),
        arith::CmpIOp::create(b, arith::CmpIPredicate::eq, mantissa, c(7)));
    Value value = arith::SelectOp::create(b, isSubnormal, subnormal, normal);
    return arith::SelectOp::create(
        b, isNaN, f32(std::numeric_limits<float>::quiet_NaN()), value);
  }
  /// Rowwise quantization of in [T, width] into values (f32 on the e4m3
  /// grid) and scales [T], the recipe of RowwiseFP8.h.
  void emitQuantize(Value in, int64_t width, Value values, Value scales) {
    forLoop(index(0), tokens, [&](Value t) {
      Value amax = reduce(index(0), index(width), f32(0), [&](Value k, Value acc) {
        return arith::MaximumFOp::create(b, acc, math::AbsFOp::create(b, load(in, {t, k})));
      });
      RowwiseScale scale = emitRowwiseScale(b, amax);
      store(arith::TruncFOp::create(b, b.getF32Type(), scale.scale), scales, {t});
      forLoop(index(0), index(width), [&](Value k) {
        store(roundToE4M3(emitScaledQuotient(b, load(in, {t, k}), scale)), values, {t, k});
      });
    });
  }
  /// A [T, width] f32 scratch buffer, freed by the caller.
  Value scratchRows(int64_t width) {
    return memref::AllocOp::create(
        b, MemRefType::get({ShapedType::kDynamic, width}, b.getF32Type()),
        ValueRange{tokens});
  }
  void emitLayerNorm(Value in, Value w, double eps, int64_t hidden, Value out);
  void emitSwiGLU(Value gate, Value up, int64_t width, Value out);

  // --- one lowering per op --------------------------------------------------
  void lower(attn::EmbeddingOp op);
  void lower(attn::LayerNormOp op);
  void lower(attn::LinearOp op);
  void lower(attn::AttentionOp op);
  void lower(attn::SwiGLUOp op);
  void lower(attn::ResidualSumOp op);
  void lower(attn::LogitsOp op);
  void lower(attn::QuantizeOp op);
  void lower(attn::FP8LinearOp op);
  void lower(attn::LayerNormQuantOp op);
  void lower(attn::SwiGLUQuantOp op);

  CacheSlot cacheSlotOf(attn::AttentionOp op);

  func::FuncOp step;
  ModuleOp module;
  Value tokens; // T, the number of tokens of this step (index)
  DenseMap<Value, Value> buffers;
  /// Per-token scratch of attention, allocated once at entry (not in loops).
  Value queryScratch, accScratch;
};

LogicalResult StepLowering::run(func::FuncOp source) {
  b.setInsertionPointToStart(step.addEntryBlock());
  tokens = memref::DimOp::create(b, arg(kIds), 0);
  buffers[source.getArgument(0)] = arg(kIds);
  buffers[source.getArgument(1)] = arg(kPositions);

  int64_t maxHeadDim = 1;
  source.walk([&](attn::AttentionOp op) {
    maxHeadDim = std::max<int64_t>(maxHeadDim, op.getHeadDim());
  });
  auto scratch = MemRefType::get({maxHeadDim}, b.getF32Type());
  queryScratch = memref::AllocaOp::create(b, scratch);
  accScratch = memref::AllocaOp::create(b, scratch);

  // Free each buffer right after the last op that reads it.
  Block &body = source.getBody().front();
  DenseMap<Value, Operation *> lastUse;
  for (Operation &op : body)
    for (Value operand : op.getOperands())
      lastUse[operand] = &op;

  for (Operation &op : body) {
    if (isa<func::ReturnOp>(op))
      break; // the logits op wrote into the logits argument
    b.setLoc(op.getLoc());
    bool handled = true;
    llvm::TypeSwitch<Operation *>(&op)
        .Case<attn::EmbeddingOp, attn::LayerNormOp, attn::LinearOp,
              attn::AttentionOp, attn::SwiGLUOp, attn::ResidualSumOp,
              attn::LogitsOp, attn::QuantizeOp, attn::FP8LinearOp,
              attn::LayerNormQuantOp, attn::SwiGLUQuantOp>(
            [&](auto typed) { lower(typed); })
        .Default([&](Operation *) { handled = false; });
    if (!handled)
      return op.emitOpError("cannot be lowered to the host target");
    for (Value operand : op.getOperands())
      if (!isa<BlockArgument>(operand) && lastUse[operand] == &op &&
          buffers.count(operand))
        memref::DeallocOp::create(b, buffers[operand]);
  }
  func::ReturnOp::create(b);
  return success();
}

void StepLowering::lower(attn::EmbeddingOp op) {
  Value out = allocActivation(op.getResult());
  Value table = weight(op.getWeightAttr());
  int64_t hidden = cast<RankedTensorType>(op.getType()).getDimSize(1);
  Value ids = buffers[op.getIds()];
  forLoop(index(0), tokens, [&](Value t) {
    Value row = toIndex(load(ids, {t}));
    forLoop(index(0), index(hidden), [&](Value d) {
      store(load(table, {row, d}), out, {t, d});
    });
  });
}

// out = (x - mean) / sqrt(var + eps) * w, biased variance (Cohere LayerNorm).
void StepLowering::lower(attn::LayerNormOp op) {
  Value out = allocActivation(op.getResult());
  emitLayerNorm(buffers[op.getInput()], weight(op.getWeightAttr()),
                op.getEps().convertToDouble(),
                cast<RankedTensorType>(op.getType()).getDimSize(1), out);
}

void StepLowering::emitLayerNorm(Value in, Value w, double eps, int64_t hidden,
                                 Value out) {
  Value n = f32(hidden);
  forLoop(index(0), tokens, [&](Value t) {
    Value sum = reduce(index(0), index(hidden), f32(0), [&](Value d, Value acc) {
      return addf(acc, load(in, {t, d}));
    });
    Value mean = arith::DivFOp::create(b, sum, n);
    Value sq = reduce(index(0), index(hidden), f32(0), [&](Value d, Value acc) {
      Value c = subf(load(in, {t, d}), mean);
      return addf(acc, mulf(c, c));
    });
    Value var = arith::DivFOp::create(b, sq, n);
    Value rstd = math::RsqrtOp::create(b, addf(var, f32(eps)));
    forLoop(index(0), index(hidden), [&](Value d) {
      Value normed = mulf(subf(load(in, {t, d}), mean), rstd);
      store(mulf(normed, load(w, {d})), out, {t, d});
    });
  });
}

// The host computes in f32: norm_type is f32 here, so the fused op is the
// unfused pair on a scratch row buffer.
void StepLowering::lower(attn::LayerNormQuantOp op) {
  Value values = allocActivation(op.getValues());
  Value scales = allocActivation(op.getScales());
  int64_t hidden = cast<RankedTensorType>(op.getInput().getType()).getDimSize(1);
  Value normed = scratchRows(hidden);
  emitLayerNorm(buffers[op.getInput()], weight(op.getWeightAttr()),
                op.getEps().convertToDouble(), hidden, normed);
  emitQuantize(normed, hidden, values, scales);
  memref::DeallocOp::create(b, normed);
}

void StepLowering::lower(attn::QuantizeOp op) {
  Value values = allocActivation(op.getValues());
  Value scales = allocActivation(op.getScales());
  emitQuantize(buffers[op.getInput()],
               cast<RankedTensorType>(op.getInput().getType()).getDimSize(1), values,
               scales);
}

void StepLowering::lower(attn::SwiGLUQuantOp op) {
  Value values = allocActivation(op.getValues());
  Value scales = allocActivation(op.getScales());
  int64_t width = cast<RankedTensorType>(op.getGate().getType()).getDimSize(1);
  Value product = scratchRows(width);
  emitSwiGLU(buffers[op.getGate()], buffers[op.getUp()], width, product);
  emitQuantize(product, width, values, scales);
  memref::DeallocOp::create(b, product);
}

// out[t, n] = x_scale[t] * w_scale[n] * sum_k x[t, k] * w[n, k]; the products
// of e4m3 values are exact in f32.
void StepLowering::lower(attn::FP8LinearOp op) {
  Value out = allocActivation(op.getResult());
  Value in = buffers[op.getInput()], inScales = buffers[op.getInputScales()];
  Value w = weight(op.getWeightAttr()), wScales = weight(op.getWeightScaleAttr());
  int64_t inFeatures = cast<RankedTensorType>(op.getInput().getType()).getDimSize(1);
  int64_t outFeatures = cast<RankedTensorType>(op.getType()).getDimSize(1);
  forLoop(index(0), tokens, [&](Value t) {
    forLoop(index(0), index(outFeatures), [&](Value n) {
      Value sum = reduce(index(0), index(inFeatures), f32(0), [&](Value k, Value acc) {
        return addf(acc, mulf(load(in, {t, k}), decodeE4M3(load(w, {n, k}))));
      });
      store(mulf(mulf(sum, load(inScales, {t})), load(wScales, {n})), out, {t, n});
    });
  });
}

void StepLowering::lower(attn::LinearOp op) {
  Value out = allocActivation(op.getResult());
  Value in = buffers[op.getInput()];
  Value w = weight(op.getWeightAttr());
  int64_t inFeatures = cast<RankedTensorType>(op.getInput().getType()).getDimSize(1);
  int64_t outFeatures = cast<RankedTensorType>(op.getType()).getDimSize(1);
  forLoop(index(0), tokens, [&](Value t) {
    forLoop(index(0), index(outFeatures), [&](Value n) {
      store(dot(in, t, w, n, inFeatures), out, {t, n});
    });
  });
}

void StepLowering::lower(attn::SwiGLUOp op) {
  Value out = allocActivation(op.getResult());
  emitSwiGLU(buffers[op.getGate()], buffers[op.getUp()],
             cast<RankedTensorType>(op.getType()).getDimSize(1), out);
}

// silu(g) * u = g / (1 + exp(-g)) * u
void StepLowering::emitSwiGLU(Value gate, Value up, int64_t width, Value out) {
  forLoop(index(0), tokens, [&](Value t) {
    forLoop(index(0), index(width), [&](Value d) {
      Value g = load(gate, {t, d});
      Value e = math::ExpOp::create(b, arith::NegFOp::create(b, g));
      Value silu = arith::DivFOp::create(b, g, addf(f32(1), e));
      store(mulf(silu, load(up, {t, d})), out, {t, d});
    });
  });
}

void StepLowering::lower(attn::ResidualSumOp op) {
  Value out = allocActivation(op.getResult());
  int64_t features = cast<RankedTensorType>(op.getType()).getDimSize(1);
  SmallVector<Value> inputs;
  for (Value v : op.getInputs())
    inputs.push_back(buffers[v]);
  forLoop(index(0), tokens, [&](Value t) {
    forLoop(index(0), index(features), [&](Value d) {
      Value sum = load(inputs[0], {t, d});
      for (Value in : ArrayRef<Value>(inputs).drop_front())
        sum = addf(sum, load(in, {t, d}));
      store(sum, out, {t, d});
    });
  });
}

// logits[r, v] = (x[rows[r]] . E[v]) * scale, only for the requested rows.
void StepLowering::lower(attn::LogitsOp op) {
  Value in = buffers[op.getInput()];
  Value table = weight(op.getWeightAttr());
  Value rows = arg(kLogitRows), logits = arg(kLogits);
  auto type = cast<RankedTensorType>(op.getType());
  int64_t hidden = cast<RankedTensorType>(op.getInput().getType()).getDimSize(1);
  Value scale = f32(op.getScale().convertToDouble());
  Value numRows = memref::DimOp::create(b, rows, 0);
  forLoop(index(0), numRows, [&](Value r) {
    Value t = toIndex(load(rows, {r}));
    forLoop(index(0), index(type.getDimSize(1)), [&](Value v) {
      store(mulf(dot(in, t, table, v, hidden), scale), logits, {r, v});
    });
  });
}

CacheSlot StepLowering::cacheSlotOf(attn::AttentionOp op) {
  KVCachePlacement placement = kvCachePlacementOf(op);
  CacheSlot slot;
  slot.group = index(placement.group);
  slot.slot = placement.slot;
  slot.layersInGroup = placement.layersInGroup;
  return slot;
}

// Per token t at position p of sequence row s (one pass over the step):
//   1. K and V of t (K rotated when the layer has RoPE) into the cache;
//   2. o[t, h] = softmax_j(q[t, h] . K[j] / sqrt(hd)) V[j] over the cached
//      keys j of s with p - W < j <= p (sliding) or j <= p (full).
// Softmax in two passes: the maximum score, then the exponentials.
void StepLowering::lower(attn::AttentionOp op) {
  Value out = allocActivation(op.getResult());
  Value q = buffers[op.getQ()], k = buffers[op.getK()], v = buffers[op.getV()];
  Value positions = buffers[op.getPositions()], seqs = arg(kSeqs);
  int64_t heads = op.getNumHeads(), kvHeads = op.getNumKvHeads();
  int64_t hd = op.getHeadDim(), group = heads / kvHeads;
  auto rope = dyn_cast<attn::RopeAttr>(op.getPosition());
  std::optional<int64_t> window = op.getSlidingWindow();
  CacheSlot cache = cacheSlotOf(op);
  Value tables = arg(kKVTables), pool = arg(kKVPool);
  Value blockSize =
      arith::IndexCastOp::create(b, b.getIndexType(), arg(kBlockSize));

  // Offset of element (kv, token j, KV head, 0) in the pool.
  auto cacheOffset = [&](Value s, Value j, int64_t kv, Value kvh) {
    Value block = toIndex(load(
        tables, {cache.group, s, arith::DivUIOp::create(b, j, blockSize)}));
    Value inBlock = arith::RemUIOp::create(b, j, blockSize);
    Value row =
        kvPoolRowOffset(b, block, index(cache.slot), cache.layersInGroup,
                        blockSize, inBlock, kv, kvHeads * hd);
    return add(row, mul(kvh, index(hd)));
  };

  // A value as the cache holds it: rounded to e4m3 for an fp8 KV cache
  // (scale 1), kept in the f32 pool.
  bool e4m3 = hasE4M3KVCache(module);
  auto asStored = [&](Value x) { return e4m3 ? roundToE4M3(x) : x; };

  // 1. Append K (rotated) and V.
  forLoop(index(0), tokens, [&](Value t) {
    Value p32 = load(positions, {t});
    Value p = toIndex(p32), s = toIndex(load(seqs, {t}));
    forLoop(index(0), index(kvHeads), [&](Value kvh) {
      Value kBase = cacheOffset(s, p, 0, kvh), vBase = cacheOffset(s, p, 1, kvh);
      Value col = mul(kvh, index(hd));
      forLoop(index(0), index(hd), [&](Value d) {
        store(asStored(load(v, {t, add(col, d)})), pool, {add(vBase, d)});
      });
      if (!rope) {
        forLoop(index(0), index(hd), [&](Value d) {
          store(asStored(load(k, {t, add(col, d)})), pool, {add(kBase, d)});
        });
        return;
      }
      // Interleaved pairs (x[2m], x[2m+1]) rotate by angle(p, m).
      forLoop(index(0), index(hd / 2), [&](Value m) {
        auto [c, sn] = emitRotaryCosSin(b, rope.getTheta().convertToDouble(), hd, p32, m);
        Value even = mul(m, index(2)), odd = add(even, index(1));
        auto [r0, r1] = emitRotatePair(b, load(k, {t, add(col, even)}),
                                       load(k, {t, add(col, odd)}), c, sn);
        store(asStored(r0), pool, {add(kBase, even)});
        store(asStored(r1), pool, {add(kBase, odd)});
      });
    });
  });

  // 2. Attend.
  Value scale = f32(1.0 / std::sqrt((double)hd));
  forLoop(index(0), tokens, [&](Value t) {
    Value p32 = load(positions, {t});
    Value p = toIndex(p32), s = toIndex(load(seqs, {t}));
    Value first = index(0);
    if (window) // keys p - W < j <= p
      first = arith::MaxSIOp::create(b, index(0), add(p, index(1 - *window)));
    Value end = add(p, index(1));
    forLoop(index(0), index(heads), [&](Value h) {
      Value kvh = arith::DivUIOp::create(b, h, index(group));
      Value col = mul(h, index(hd));
      // The query row, rotated for RoPE layers.
      if (rope) {
        forLoop(index(0), index(hd / 2), [&](Value m) {
          auto [c, sn] = emitRotaryCosSin(b, rope.getTheta().convertToDouble(), hd, p32, m);
          Value even = mul(m, index(2)), odd = add(even, index(1));
          auto [r0, r1] = emitRotatePair(b, load(q, {t, add(col, even)}),
                                         load(q, {t, add(col, odd)}), c, sn);
          store(r0, queryScratch, {even});
          store(r1, queryScratch, {odd});
        });
      } else {
        forLoop(index(0), index(hd), [&](Value d) {
          store(load(q, {t, add(col, d)}), queryScratch, {d});
        });
      }
      auto score = [&](Value j) {
        Value base = cacheOffset(s, j, 0, kvh);
        Value dotv =
            reduce(index(0), index(hd), f32(0), [&](Value d, Value acc) {
              return addf(acc, mulf(load(queryScratch, {d}),
                                    load(pool, {add(base, d)})));
            });
        return mulf(dotv, scale);
      };
      Value maxScore = reduce(first, end, f32(-std::numeric_limits<float>::infinity()),
                              [&](Value j, Value acc) {
                                return arith::MaximumFOp::create(b, acc, score(j));
                              });
      forLoop(index(0), index(hd), [&](Value d) { store(f32(0), accScratch, {d}); });
      Value denom = reduce(first, end, f32(0), [&](Value j, Value acc) {
        Value e = math::ExpOp::create(b, subf(score(j), maxScore));
        Value base = cacheOffset(s, j, 1, kvh);
        forLoop(index(0), index(hd), [&](Value d) {
          Value prev = load(accScratch, {d});
          store(addf(prev, mulf(e, load(pool, {add(base, d)}))), accScratch,
                {d});
        });
        return addf(acc, e);
      });
      forLoop(index(0), index(hd), [&](Value d) {
        store(arith::DivFOp::create(b, load(accScratch, {d}), denom), out,
              {t, add(col, d)});
      });
    });
  });
}

struct ConvertAttnToHostPass
    : public mlir::cohere2c::impl::ConvertAttnToHostBase<ConvertAttnToHostPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    auto source = module.lookupSymbol<func::FuncOp>(kStepFunctionName);
    if (!source) {
      module.emitError() << "no @" << kStepFunctionName << " to lower";
      return signalPassFailure();
    }
    // Host arithmetic is f32, FP8 emulated exactly (bf16 is the cuda
    // target's).
    WalkResult precision = module.walk([&](attn::WeightOp w) {
      Type element = cast<RankedTensorType>(w.getType()).getElementType();
      if (!element.isF32() && !isa<Float8E4M3FNType>(element)) {
        w.emitOpError("the host target computes in f32 or fp8-rowwise; compile "
                      "with --precision f32 or fp8-rowwise");
        return WalkResult::interrupt();
      }
      return WalkResult::advance();
    });
    if (precision.wasInterrupted())
      return signalPassFailure();
    if (failed(requireQuantizedLinears(module)))
      return signalPassFailure();

    MLIRContext *ctx = &getContext();
    ImplicitLocOpBuilder b(source.getLoc(), ctx);
    auto dyn = ShapedType::kDynamic;
    Type i32 = b.getI32Type(), f32 = b.getF32Type();
    SmallVector<Type> args(kNumStepArgs);
    args[kWeights] = MemRefType::get({dyn}, b.getI8Type());
    args[kIds] = args[kPositions] = args[kSeqs] = args[kLogitRows] =
        MemRefType::get({dyn}, i32);
    args[kKVTables] = MemRefType::get({dyn, dyn, dyn}, i32);
    args[kKVPool] = MemRefType::get({dyn}, f32);
    args[kLogits] = MemRefType::get({dyn, dyn}, f32);
    args[kBlockSize] = b.getI64Type();

    b.setInsertionPoint(source);
    auto step = func::FuncOp::create(b, "cohere2c_step_lowered",
                                     b.getFunctionType(args, {}));
    step->setAttr("llvm.emit_c_interface", b.getUnitAttr());
    StepLowering lowering(b, step, module);
    if (failed(lowering.run(source)))
      return signalPassFailure();
    source.erase();
    step.setName(kStepFunctionName);
    for (auto w : llvm::make_early_inc_range(module.getOps<attn::WeightOp>()))
      w.erase();
  }
};

} // namespace
