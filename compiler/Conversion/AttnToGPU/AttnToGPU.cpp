//===- AttnToGPU.cpp - attn step -> gpu kernels and a launch plan ---------===//
//
// Every attn op but the linear layers becomes a launch of a kernel generated
// here, specialized by the op's shapes and attributes (a full layer's kernels
// have no rotary code and no window bound); linear layers and the logits
// projection become GEMMs the runtime runs with cuBLASLt (linear layers of a
// one-token step: matrix-vector kernels), and the logits rows of a batch
// that wants only tokens their tokens (sample_tokens). Kernels that are
// specialized alike are generated once (all sliding layers share one
// attention kernel; the layer's KV slot is an argument). The kernels:
// KernelGenerator.h; here, the launch plan: buffers, merged GEMMs, and the
// launch of each op's kernels.
//
//===----------------------------------------------------------------------===//

#include "Conversion/AttnToGPU/AttnToGPU.h"
#include "Conversion/AttnToGPU/KernelGenerator.h"

#include "Conversion/KVCachePlacement.h"
#include "Conversion/QuantizedLinears.h"
#include "Frontend/ModelToAttn.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"

#include "llvm/ADT/TypeSwitch.h"

namespace mlir::cohere2c {
#define GEN_PASS_DEF_CONVERTATTNTOGPU
#include "Conversion/Passes.h.inc"
} // namespace mlir::cohere2c

namespace mlir::cohere2c::attn_to_gpu {

bool KernelGenerator::beginKernel(const std::string &name, ArrayRef<Type> args,
                                  int64_t threads, int64_t scratchFloats, bool waitAtStart) {
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
  if (waitAtStart)
    waitForPreviousLaunch();
  return true;
}

void KernelGenerator::waitForPreviousLaunch() {
  // Inline assembly with a memory clobber rather than nvvm.griddepcontrol:
  // LLVM's intrinsic is declared as not touching memory, so nothing would
  // keep the optimizer from moving a load of activations above it.
  LLVM::InlineAsmOp::create(b, TypeRange{}, ValueRange{}, "griddepcontrol.wait;", "~{memory}",
                            /*has_side_effects=*/true, /*is_align_stack=*/false,
                            LLVM::tailcallkind::TailCallKind::None, LLVM::AsmDialectAttr(),
                            ArrayAttr());
  NVVM::GriddepcontrolOp::create(b, NVVM::GridDepActionKind::launch_dependents);
}

void KernelGenerator::endKernel() { gpu::ReturnOp::create(b); }

namespace {

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

/// Residual sums x + l_1 + ... + l_n whose every summand but the first is a
/// linear layer of its own that nothing else reads, with the sum's f32
/// type (Cohere2's o and down projections): the sum -> those layers, in
/// program order. Their GEMMs add into the sum's buffer in the epilogue
/// (cuBLASLt's beta = 1), so the sum needs no kernel and its summands no
/// buffers.
DenseMap<Operation *, SmallVector<Operation *>>
foldedSummands(Block &body, const DenseMap<Operation *, Operation *> &merged) {
  DenseMap<Operation *, SmallVector<Operation *>> folded;
  for (auto sum : body.getOps<attn::ResidualSumOp>()) {
    SmallVector<Operation *> summands;
    for (Value v : sum.getInputs().drop_front()) {
      Operation *def = v.getDefiningOp();
      if (def && isa<attn::LinearOp, attn::FP8LinearOp>(def) &&
          !merged.count(def) && v.hasOneUse() && v.getType() == sum.getType())
        summands.push_back(def);
    }
    if (sum.getInputs().size() > 1 &&
        summands.size() == sum.getInputs().size() - 1 &&
        sum.getInputs().front().getType() == sum.getType())
      folded[sum] = summands;
  }
  return folded;
}

} // namespace

namespace {

/// The element type of an op's result (or operand) `v`.
Type elementOf(Value v) { return cast<RankedTensorType>(v.getType()).getElementType(); }

/// Row kernels (norms, quantization) hold a row as pairs of values.
LogicalResult evenWidth(Operation *op, int64_t width) {
  if (width % 2 == 0)
    return success();
  return op->emitOpError("the cuda target needs an even row width, found ") << width;
}

} // namespace

int64_t KernelGenerator::rowUnit(Type e, int64_t width, ArrayRef<PlanArg> views,
                                 int64_t fallback) const {
  int64_t unit = vectorUnit(e);
  return width % unit == 0 && viewsAligned(views, unit) ? unit : fallback;
}

bool KernelGenerator::viewsAligned(ArrayRef<PlanArg> views,
                                   int64_t unit) const {
  return llvm::all_of(views, [&](const PlanArg &v) {
    return strideOf(v) % unit == 0 && v.column % unit == 0;
  });
}

LogicalResult KernelGenerator::run(func::FuncOp step) {
  Block &body = step.getBody().front();
  // A merged GEMM runs where the first of its linear layers was; the others
  // only name their column range of its output.
  DenseMap<Operation *, SmallVector<Operation *>> mergedAt;
  DenseMap<Operation *, Operation *> merged; // a merged layer -> the first of its group
  for (SmallVector<Operation *> &group : mergeableLinears(module, body)) {
    Operation *first = *llvm::min_element(
        group, [](Operation *x, Operation *y) { return x->isBeforeInBlock(y); });
    for (Operation *op : group)
      merged[op] = first;
    mergedAt[first] = std::move(group);
  }
  DenseMap<Operation *, SmallVector<Operation *>> folded =
      foldedSummands(body, merged);
  DenseSet<Operation *> summands; // lowered with their sum
  for (auto &[sum, layers] : folded)
    summands.insert(layers.begin(), layers.end());
  for (Operation &op : body) {
    if (isa<func::ReturnOp>(op))
      break;
    b.setLoc(op.getLoc());
    if (merged.count(&op)) {
      if (mergedAt.count(&op))
        lowerLinears(mergedAt[&op]);
    } else if (folded.count(&op)) {
      lowerFoldedSum(cast<attn::ResidualSumOp>(op), folded[&op]);
    } else if (summands.count(&op)) {
      continue;
    } else if (failed(lowerOp(op))) {
      return failure();
    }
  }
  generateWeightFills();
  return success();
}

void KernelGenerator::lowerFoldedSum(attn::ResidualSumOp op,
                                     ArrayRef<Operation *> summands) {
  // The last layer in program order first, adding the sum's first input:
  // in Cohere2 that is the MLP's down projection, whose branch runs on the
  // side stream (plan-assign-streams), and the o projection, adding into
  // the same buffer, joins it.
  PlanArg out = bufferFor(op.getResult());
  PlanArg addend = buffers[op.getInputs().front()];
  for (Operation *layer : llvm::reverse(summands)) {
    lowerLinears(layer, SumInto{addend, out});
    addend = out;
  }
}

void KernelGenerator::lowerLinears(ArrayRef<Operation *> group,
                                   std::optional<SumInto> sum) {
  assert((!sum || group.size() == 1) && "only a single layer adds into a sum");
  Value input = group[0]->getOperand(0);
  auto widthOf = [](Operation *op) {
    return cast<RankedTensorType>(op->getResult(0).getType()).getDimSize(1);
  };
  int64_t n = 0;
  for (Operation *op : group)
    n += widthOf(op);
  Type outType = elementOf(group[0]->getResult(0));
  PlanArg out;
  if (sum) {
    out = sum->out;
  } else if (group.size() == 1) {
    out = bufferFor(group[0]->getResult(0));
  } else {
    out = buffer(allocate(n, outType));
    int64_t column = 0;
    for (Operation *op : group) {
      PlanArg view = out;
      view.column = column;
      view.width = widthOf(op);
      buffers[op->getResult(0)] = view;
      column += view.width;
    }
  }
  // Steps of one token take the matrix-vector kernel (bf16 or FP8 input,
  // rows of whole 16-byte chunks), other steps cuBLASLt.
  StringRef weight = group[0]->getAttrOfType<FlatSymbolRefAttr>("weight").getValue();
  auto fp8 = dyn_cast<attn::FP8LinearOp>(group[0]);
  int64_t k = cast<RankedTensorType>(input.getType()).getDimSize(1);
  Type inputType = elementOf(input);
  bool gemv = (fp8 || inputType.isBF16()) && (outType.isBF16() || outType.isF32()) &&
              k % (fp8 ? 16 : 8) == 0 && buffers[input].column == 0;
  StepParam m = gemv ? StepParam::GemmTokens : StepParam::Tokens;
  std::optional<PlanArg> addend =
      sum ? std::optional(sum->addend) : std::nullopt;
  if (fp8)
    gemmStep(buffers[input], out, weight, m, n, k, 1.0,
             std::pair{fp8.getWeightScaleAttr().getValue(),
                       buffers[fp8.getInputScales()]},
             addend);
  else
    gemmStep(buffers[input], out, weight, m, n, k, 1.0, std::nullopt, addend);
  if (!gemv)
    return;
  int64_t perBlock = gemvBlockRows((bool)fp8, n);
  // The weights (and scales) of the whole group: n rows from the first's.
  PlanArg w = weightArg(weight);
  w.width = n * k;
  std::vector<PlanArg> args = {buffers[input], w};
  if (fp8) {
    PlanArg wScales = weightArg(fp8.getWeightScaleAttr().getValue());
    wScales.width = n;
    args = {buffers[input], buffers[fp8.getInputScales()], w, wScales};
  }
  if (sum)
    args.push_back(sum->addend);
  args.push_back(out);
  kernelStep(gemvKernel((bool)fp8, n, k, outType, sum.has_value()),
             StepParam::GemvToken, (n + perBlock - 1) / perBlock,
             kGemvWarps * kWarp, args);
}

LogicalResult KernelGenerator::lowerAttention(attn::AttentionOp o) {
  // The kernels' lane layouts are written for these widths: a lane of the
  // split kernel owns head_dim / 32 features, the prefill kernel's
  // fragments take features in pairs.
  if (o.getHeadDim() != kWarp && o.getHeadDim() % (2 * kWarp) != 0)
    return o.emitOpError("the cuda target needs head_dim 32 or a multiple of 64, found ")
           << o.getHeadDim();
  Type e = elementOf(o.getResult());
  KVCachePlacement placement = kvCachePlacementOf(o);
  int64_t layers = placement.layersInGroup;
  PlanArg tables = PlanArg::of(PlanInput::KVTables, placement.group),
          pool = input(PlanInput::KVPool);
  PlanArg slot = constant(placement.slot), bs = param(StepParam::BlockSize),
          width = param(StepParam::TableWidth);
  PlanArg q = buffers[o.getQ()], k = buffers[o.getK()], v = buffers[o.getV()];
  PlanArg positions = input(PlanInput::Positions), seqs = input(PlanInput::Seqs);
  std::vector<PlanArg> appendArgs = {k, v, positions, seqs, tables, pool, slot, bs, width};
  // RoPE layers: the append kernel rotates q too, into a buffer of its own
  // that the attention kernels read.
  bool rope = isa<attn::RopeAttr>(o.getPosition());
  int64_t heads = o.getNumHeads(), hd = o.getHeadDim();
  if (rope) {
    appendArgs.push_back(q);
    appendArgs.push_back(buffer(allocate(heads * hd, e)));
  }
  kernelStep(kvAppendKernel(e, o, layers, strideOf(k), strideOf(v), strideOf(q),
                            viewsAligned({q, k, v}, 2) ? 2 : 1),
             StepParam::Tokens, rope ? 1 : chunksOf(o.getNumKvHeads() * hd / 2),
             kvAppendThreads(rope, hd), appendArgs);
  if (rope)
    q = appendArgs.back();
  // bf16: generated tokens take the tensor-core decode kernel (a block per
  // generated token, KV head and split, listed by generated_rows; a group of
  // query heads fills at most one 16-row tile), prompt tokens the prefill
  // kernel (it skips the others by the generated flags). f32 runs the split
  // kernel on CUDA cores for every token (mma would round q, k and v to
  // bf16), as do head sizes whose key tiles do not fit the prefill kernel's
  // shared buffers (above 128).
  int64_t queriesPerKv = heads / o.getNumKvHeads();
  bool tensorCores = e.isBF16() && queriesPerKv <= 16 && prefillFits(hd);
  StepParam mergeTokens = tensorCores ? StepParam::DecodeMergeTokens : StepParam::TokenMergeTokens;
  StepParam splits = tensorCores ? StepParam::DecodeSplits : StepParam::TokenSplits;
  StepParam splitBlocks = tensorCores ? StepParam::DecodeSplitBlocks : StepParam::TokenSplitBlocks;
  // Partial results [tokens, heads, splits, m l acc[hd]], f32 (sized as
  // tokens x splits rows of heads x (hd + 2)).
  Type f32 = b.getF32Type();
  PlanArg partial = buffer(allocate(heads * (hd + 2), f32, splitBlocks));
  PlanArg out = bufferFor(o.getResult());
  std::vector<PlanArg> splitArgs = {q,    positions, seqs,  tables,        pool,
                                    out,  slot,      bs,    width, param(splits), partial};
  std::vector<PlanArg> mergeArgs = {partial, out, param(splits)};
  if (tensorCores) {
    splitArgs.push_back(input(PlanInput::GeneratedRows));
    mergeArgs.push_back(input(PlanInput::GeneratedRows));
  }
  kernelStep(tensorCores ? decodeAttentionKernel(o, layers, strideOf(q))
                         : attentionKernel(e, o, layers, strideOf(q)),
             splitBlocks,
             o.getNumKvHeads(), tensorCores ? kWarp : kAttentionWarps * kWarp, splitArgs);
  kernelStep(attentionMergeKernel(e, heads, hd,
                                  tensorCores ? KernelRows::Generated : KernelRows::All),
             mergeTokens, heads, hd, mergeArgs);
  if (!tensorCores)
    return success();
  // Prompt tokens: a block per (tile, key split, KV head); with several
  // splits, partial results [tokens, heads, splits, m l acc[hd]] and their
  // merge.
  PlanArg promptPartial =
      buffer(allocate(heads * (hd + 2), f32, StepParam::PrefillPartials));
  PlanArg generated = input(PlanInput::Generated), prefillSplits = param(StepParam::PrefillSplits);
  kernelStep(prefillAttentionKernel(o, layers, strideOf(q)), StepParam::PrefillBlocks,
             o.getNumKvHeads(), queriesPerKv * kWarp,
             {q, positions, seqs, tables, pool, out, slot, bs, width, param(StepParam::Tokens),
              prefillSplits, promptPartial, generated});
  kernelStep(attentionMergeKernel(e, heads, hd, KernelRows::Prompt),
             StepParam::PrefillMergeTokens, heads, hd,
             {promptPartial, out, prefillSplits, generated});
  return success();
}

void KernelGenerator::lowerLogits(attn::LogitsOp o) {
  auto in = cast<RankedTensorType>(o.getInput().getType());
  int64_t vocab = cast<RankedTensorType>(o.getType()).getDimSize(1);
  // The rows wanting logits, gathered: a buffer of `rows` rows.
  PlanArg rows = buffer(allocate(in.getDimSize(1), in.getElementType(), StepParam::Rows));
  kernelStep(gatherRowsKernel(in.getElementType(), in.getDimSize(1)), StepParam::Rows,
             chunksOf(in.getDimSize(1)), kChunkThreads,
             {buffers[o.getInput()], input(PlanInput::LogitRows), rows});
  gemmStep(rows, input(PlanInput::Logits), o.getWeightAttr().getValue(), StepParam::Rows, vocab,
           in.getDimSize(1), o.getScale().convertToDouble());
  // Only where the runtime asks for the rows' tokens alone (greedy, or
  // sampled at a temperature).
  kernelStep(sampleTokensKernel(vocab), StepParam::SampledRows, 1,
             kSampleThreads,
             {input(PlanInput::Logits), input(PlanInput::Temperatures),
              input(PlanInput::NoiseSeeds), input(PlanInput::SampledTokens)});
}

LogicalResult KernelGenerator::lowerOp(Operation &op) {
  using P = StepParam;
  return llvm::TypeSwitch<Operation *, LogicalResult>(&op)
      .Case([&](attn::EmbeddingOp o) {
        auto type = cast<RankedTensorType>(o.getType());
        auto table = SymbolTable::lookupNearestSymbolFrom<attn::WeightOp>(module,
                                                                           o.getWeightAttr());
        Kernel k = embeddingKernel(cast<RankedTensorType>(table.getType()).getElementType(),
                                        type.getElementType(), type.getDimSize(1));
        kernelStep(k, P::Tokens, chunksOf(type.getDimSize(1)), kChunkThreads,
                   {input(PlanInput::Ids), weightArg(o.getWeightAttr().getValue()),
                    bufferFor(o.getResult())});
        return success();
      })
      .Case([&](attn::LayerNormOp o) {
        auto type = cast<RankedTensorType>(o.getType());
        if (failed(evenWidth(o, type.getDimSize(1))))
          return failure();
        Kernel k = layerNormKernel(elementOf(o.getInput()), type.getElementType(),
                                        type.getDimSize(1), o.getEps().convertToDouble());
        kernelStep(k, P::Tokens, 1, rowThreads(type.getDimSize(1)),
                   {buffers[o.getInput()], weightArg(o.getWeightAttr().getValue()),
                    bufferFor(o.getResult())});
        return success();
      })
      .Case<attn::LinearOp, attn::FP8LinearOp>([&](Operation *o) {
        lowerLinears({o});
        return success();
      })
      .Case([&](attn::AttentionOp o) { return lowerAttention(o); })
      .Case([&](attn::SwiGLUOp o) {
        auto type = cast<RankedTensorType>(o.getType());
        PlanArg gate = buffers[o.getGate()], up = buffers[o.getUp()];
        int64_t width = type.getDimSize(1),
                unit = rowUnit(type.getElementType(), width, {gate, up}, 1);
        kernelStep(swigluKernel(type.getElementType(), width, strideOf(gate),
                                strideOf(up), unit),
                   P::Tokens, chunksOf(width / unit), kChunkThreads,
                   {gate, up, bufferFor(o.getResult())});
        return success();
      })
      .Case([&](attn::ResidualSumOp o) {
        auto type = cast<RankedTensorType>(o.getType());
        std::vector<PlanArg> args;
        SmallVector<Type> inputs;
        for (Value v : o.getInputs()) {
          args.push_back(buffers[v]);
          inputs.push_back(elementOf(v));
        }
        args.push_back(bufferFor(o.getResult()));
        kernelStep(residualKernel(inputs, type.getElementType(), type.getDimSize(1)), P::Tokens,
                   chunksOf(type.getDimSize(1)), kChunkThreads, args);
        return success();
      })
      .Case([&](attn::QuantizeOp o) {
        auto in = cast<RankedTensorType>(o.getInput().getType());
        if (failed(evenWidth(o, in.getDimSize(1))))
          return failure();
        kernelStep(quantizeKernel(in.getElementType(), in.getDimSize(1)), P::Tokens, 1,
                   rowThreads(in.getDimSize(1)),
                   {buffers[o.getInput()], bufferFor(o.getValues()), bufferFor(o.getScales())});
        return success();
      })
      .Case([&](attn::LayerNormQuantOp o) {
        auto in = cast<RankedTensorType>(o.getInput().getType());
        if (failed(evenWidth(o, in.getDimSize(1))))
          return failure();
        kernelStep(layerNormQuantKernel(in.getElementType(), o.getNormType(), in.getDimSize(1),
                                        o.getEps().convertToDouble()),
                   P::Tokens, 1, rowThreads(in.getDimSize(1)),
                   {buffers[o.getInput()], weightArg(o.getWeightAttr().getValue()),
                    bufferFor(o.getValues()), bufferFor(o.getScales())});
        return success();
      })
      .Case([&](attn::SwiGLUQuantOp o) {
        auto in = cast<RankedTensorType>(o.getGate().getType());
        if (failed(evenWidth(o, in.getDimSize(1))))
          return failure();
        PlanArg gate = buffers[o.getGate()], up = buffers[o.getUp()];
        std::vector<PlanArg> args = {gate, up, bufferFor(o.getValues()), bufferFor(o.getScales())};
        int64_t width = in.getDimSize(1), blocks = tokenRowBlocks(width),
                unit = rowUnit(in.getElementType(), width, {gate, up}, 2);
        // A step of one token splits the row over blocks (the GEMV path).
        kernelStep(swigluQuantKernel(in.getElementType(), width, strideOf(gate),
                                     strideOf(up), unit),
                   blocks > 1 ? P::GemmTokens : P::Tokens, 1,
                   unitRowThreads(width, unit), args);
        if (blocks > 1)
          kernelStep(swigluQuantTokenKernel(in.getElementType(), width, strideOf(gate),
                                            strideOf(up), blocks),
                     P::GemvToken, blocks, tokenRowThreads(width, blocks), args);
        return success();
      })
      .Case([&](attn::LogitsOp o) {
        lowerLogits(o);
        return success();
      })
      .Default([&](Operation *other) {
        return other->emitOpError("cannot be lowered to the cuda target");
      });
}

} // namespace mlir::cohere2c::attn_to_gpu

namespace {

using namespace mlir;
using namespace mlir::cohere2c;
using mlir::cohere2c::attn_to_gpu::KernelGenerator;

struct ConvertAttnToGPUPass
    : public mlir::cohere2c::impl::ConvertAttnToGPUBase<ConvertAttnToGPUPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    auto step = module.lookupSymbol<func::FuncOp>(kStepFunctionName);
    if (!step) {
      module.emitError() << "no @" << kStepFunctionName << " to lower";
      return signalPassFailure();
    }
    if (failed(requireQuantizedLinears(step)))
      return signalPassFailure();
    if (hasE4M3KVCache(module)) {
      module.emitError() << "the cuda target's attention kernels read a bf16 "
                            "or f32 KV cache, not e4m3 ("
                         << kE4M3KVCacheAttrName << ")";
      return signalPassFailure();
    }
    OpBuilder b(module.getContext());
    b.setInsertionPointToEnd(module.getBody());
    auto kernels = gpu::GPUModuleOp::create(b, module.getLoc(), kKernelModuleName);
    module->setAttr(gpu::GPUDialect::getContainerModuleAttrName(), b.getUnitAttr());
    auto planStep = plan::StepOp::create(b, module.getLoc());
    planStep.getBody().emplaceBlock();
    KernelGenerator generator(module, kernels, planStep);
    if (failed(generator.run(step)))
      return signalPassFailure();
    step.erase();
    for (auto w : llvm::make_early_inc_range(module.getOps<attn::WeightOp>()))
      w.erase();
  }
};

} // namespace
