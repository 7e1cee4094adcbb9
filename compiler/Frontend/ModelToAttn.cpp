//===- ModelToAttn.cpp - Cohere2 model description -> attn module ---------===//
//
// The model (Hugging Face transformers' modeling_cohere2.py; docs/ARCHITECTURE.md):
//   h = LayerNorm(x) * w_ln
//   x = x + Attention_i(h) + Down(SiLU(Gate(h)) * Up(h))
//   logits = (LayerNorm(x) * w_final) @ Embedding^T * logit_scale
//
//===----------------------------------------------------------------------===//

#include "Frontend/ModelToAttn.h"

#include "cohere2c/Dialect/Attn/IR/Attn.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"

using namespace mlir;
using namespace mlir::cohere2c;
using ::cohere2c::DType;
using ::cohere2c::LayerKind;
using ::cohere2c::ModelConfig;
using ::cohere2c::WeightLayout;

namespace {

Type elementTypeOf(MLIRContext &context, DType dtype) {
  switch (dtype) {
  case DType::F32:
    return Float32Type::get(&context);
  case DType::BF16:
    return BFloat16Type::get(&context);
  case DType::F16:
    return Float16Type::get(&context);
  case DType::F8E4M3:
    return Float8E4M3FNType::get(&context);
  }
  return {};
}

class StepBuilder {
public:
  StepBuilder(OpBuilder &b, Location loc, const ModelConfig &config,
              const WeightLayout &weights, Type element)
      : b(b), loc(loc), config(config), weights(weights), element(element) {}

  RankedTensorType activation(int64_t features) {
    return RankedTensorType::get({ShapedType::kDynamic, features}, element);
  }
  FlatSymbolRefAttr weight(const std::string &name) {
    return FlatSymbolRefAttr::get(b.getContext(), name);
  }
  /// The rowwise scales of `name` when the layout stores it in FP8.
  FlatSymbolRefAttr scaleOf(const std::string &name) {
    std::string scale = ::cohere2c::scaleNameOf(name);
    return weights.find(scale) ? weight(scale) : FlatSymbolRefAttr();
  }
  Value linear(Value input, const std::string &name, int64_t outFeatures) {
    return attn::LinearOp::create(b, loc, activation(outFeatures), input,
                                  weight(name), scaleOf(name));
  }
  /// A projection whose output is added to the residual stream: written in
  /// f32, whatever the weights, so that it is not rounded before the sum.
  Value residualLinear(Value input, const std::string &name) {
    return attn::LinearOp::create(b, loc, residual(), input, weight(name),
                                  scaleOf(name));
  }
  /// The residual stream: f32 whatever the activations' element type, so
  /// that the sum over layers is not rounded to bf16 at every layer.
  RankedTensorType residual() {
    return RankedTensorType::get({ShapedType::kDynamic, config.hiddenSize},
                                 b.getF32Type());
  }
  Value layerNorm(Value input, const std::string &name) {
    return attn::LayerNormOp::create(b, loc, activation(config.hiddenSize), input,
                                     weight(name),
                                     b.getF64FloatAttr(config.layerNormEps));
  }

  Value layer(int64_t i, Value x, Value positions) {
    std::string p = "model.layers." + std::to_string(i) + ".";
    int64_t hd = config.headDim;
    Value h = layerNorm(x, p + "input_layernorm.weight");
    Value q = linear(h, p + "self_attn.q_proj.weight", config.numHeads * hd);
    Value k = linear(h, p + "self_attn.k_proj.weight", config.numKVHeads * hd);
    Value v = linear(h, p + "self_attn.v_proj.weight", config.numKVHeads * hd);
    Attribute window, position;
    if (config.layerKinds[i] == LayerKind::Sliding) {
      window = attn::SlidingWindowAttr::get(b.getContext(), config.slidingWindow);
      position = attn::RopeAttr::get(b.getContext(),
                                     llvm::APFloat(config.ropeTheta),
                                     /*interleaved=*/true);
    } else {
      window = attn::FullWindowAttr::get(b.getContext());
      position = attn::NoPositionAttr::get(b.getContext());
    }
    Value a = attn::AttentionOp::create(
        b, loc, activation(config.numHeads * hd), q, k, v, positions,
        b.getI64IntegerAttr(config.numHeads),
        b.getI64IntegerAttr(config.numKVHeads), b.getI64IntegerAttr(hd),
        b.getI64IntegerAttr(i), window, position);
    Value o = residualLinear(a, p + "self_attn.o_proj.weight");
    Value gate = linear(h, p + "mlp.gate_proj.weight", config.intermediateSize);
    Value up = linear(h, p + "mlp.up_proj.weight", config.intermediateSize);
    Value m = attn::SwiGLUOp::create(b, loc, gate.getType(), gate, up);
    Value down = residualLinear(m, p + "mlp.down_proj.weight");
    return attn::ResidualSumOp::create(b, loc, residual(), ValueRange{x, o, down});
  }

  OpBuilder &b;
  Location loc;
  const ModelConfig &config;
  const WeightLayout &weights;
  Type element;
};

} // namespace

OwningOpRef<ModuleOp>
mlir::cohere2c::buildAttnModule(MLIRContext &context, const ModelConfig &config,
                                const WeightLayout &weights) {
  Location loc = UnknownLoc::get(&context);
  OwningOpRef<ModuleOp> module = ModuleOp::create(loc);
  OpBuilder b(&context);
  b.setInsertionPointToEnd(module->getBody());
  for (const ::cohere2c::WeightEntry &w : weights.entries)
    attn::WeightOp::create(
        b, loc, b.getStringAttr(w.name),
        TypeAttr::get(RankedTensorType::get(w.shape,
                                            elementTypeOf(context, w.dtype))),
        b.getI64IntegerAttr(w.offset));

  // Activations take the embedding's type (linear weights may be FP8).
  Type element = elementTypeOf(context, weights.entries.front().dtype);
  auto ids = RankedTensorType::get({ShapedType::kDynamic}, b.getI32Type());
  auto logits = RankedTensorType::get({ShapedType::kDynamic, config.vocabSize},
                                      b.getF32Type());
  auto step = func::FuncOp::create(b, loc, kStepFunctionName,
                                   b.getFunctionType({ids, ids}, {logits}));
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(step.addEntryBlock());
  StepBuilder s(b, loc, config, weights, element);
  Value tokenIds = step.getArgument(0), positions = step.getArgument(1);
  Value x = attn::EmbeddingOp::create(b, loc, s.residual(), tokenIds,
                                      s.weight("model.embed_tokens.weight"));
  for (int64_t i = 0; i < config.numLayers; ++i)
    x = s.layer(i, x, positions);
  Value out = s.layerNorm(x, "model.norm.weight");
  Value result = attn::LogitsOp::create(b, loc, logits, out,
                                        s.weight("model.embed_tokens.weight"),
                                        b.getF64FloatAttr(config.logitScale));
  func::ReturnOp::create(b, loc, result);
  return module;
}
