//===- AttnOps.cpp - attn op verifiers ------------------------------------===//

#include "cohere2c/Dialect/Attn/IR/Attn.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/OpImplementation.h"

using namespace mlir;
using namespace mlir::cohere2c::attn;

#define GET_OP_CLASSES
#include "cohere2c/Dialect/Attn/IR/AttnOps.cpp.inc"

namespace {

std::string shapeString(ArrayRef<int64_t> shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i) {
    if (i)
      s += ", ";
    s += ShapedType::isDynamic(shape[i]) ? "?" : std::to_string(shape[i]);
  }
  return s + "]";
}

/// Finds the attn.weight `name` refers to and checks its shape against
/// `expected` (a dynamic entry matches anything) and, unless null, its
/// element type.
LogicalResult verifyWeightUse(Operation *op, FlatSymbolRefAttr name,
                              ArrayRef<int64_t> expected, Type elementType,
                              SymbolTableCollection &symbolTable) {
  auto weight = symbolTable.lookupNearestSymbolFrom<WeightOp>(op, name);
  if (!weight)
    return op->emitOpError() << "refers to " << name
                             << ", which is not an attn.weight";
  auto type = cast<RankedTensorType>(weight.getType());
  bool matches = type.getRank() == (int64_t)expected.size();
  for (size_t i = 0; matches && i < expected.size(); ++i)
    matches = ShapedType::isDynamic(expected[i]) ||
              expected[i] == type.getDimSize(i);
  if (!matches)
    return op->emitOpError() << "weight " << name << " has shape "
                             << shapeString(type.getShape()) << ", expected "
                             << shapeString(expected);
  if (elementType && type.getElementType() != elementType)
    return op->emitOpError() << "weight " << name << " has element type "
                             << type.getElementType() << ", expected "
                             << elementType;
  return success();
}

RankedTensorType activation(Value v) {
  return cast<RankedTensorType>(v.getType());
}

/// Token (first) dimensions must agree where both are static.
LogicalResult verifySameTokens(Operation *op, ArrayRef<Value> values) {
  int64_t tokens = ShapedType::kDynamic;
  for (Value v : values) {
    int64_t t = cast<RankedTensorType>(v.getType()).getDimSize(0);
    if (ShapedType::isDynamic(t))
      continue;
    if (!ShapedType::isDynamic(tokens) && t != tokens)
      return op->emitOpError() << "operands disagree on the number of tokens: "
                               << tokens << " and " << t;
    tokens = t;
  }
  return success();
}

} // namespace

LogicalResult WeightOp::verify() {
  auto type = cast<RankedTensorType>(getType());
  if (!isa<FloatType>(type.getElementType()))
    return emitOpError() << "weight must have a floating-point element type";
  return success();
}

LogicalResult
EmbeddingOp::verifySymbolUses(SymbolTableCollection &symbolTable) {
  auto result = activation(getResult());
  if (failed(verifySameTokens(*this, {getIds(), getResult()})))
    return failure();
  return verifyWeightUse(*this, getWeightAttr(),
                         {ShapedType::kDynamic, result.getDimSize(1)},
                         /*elementType=*/nullptr, symbolTable);
}

LogicalResult
LayerNormOp::verifySymbolUses(SymbolTableCollection &symbolTable) {
  auto result = activation(getResult());
  return verifyWeightUse(*this, getWeightAttr(), {result.getDimSize(1)},
                         result.getElementType(), symbolTable);
}

LogicalResult LinearOp::verifySymbolUses(SymbolTableCollection &symbolTable) {
  auto input = activation(getInput());
  auto result = activation(getResult());
  if (input.getElementType() != result.getElementType() &&
      !result.getElementType().isF32())
    return emitOpError() << "result element type must be the input's ("
                         << input.getElementType() << ") or f32, found "
                         << result.getElementType();
  if (failed(verifySameTokens(*this, {getInput(), getResult()})))
    return failure();
  // A weight stored in FP8 carries its rowwise scales.
  auto decl = symbolTable.lookupNearestSymbolFrom<WeightOp>(*this, getWeightAttr());
  bool fp8 = decl && isa<Float8E4M3FNType>(
                         cast<RankedTensorType>(decl.getType()).getElementType());
  if (fp8 != (bool)getWeightScaleAttr())
    return emitOpError() << (fp8 ? "an fp8 weight needs its weight_scale"
                                 : "weight_scale is only for fp8 weights");
  if (fp8)
    return success(
        succeeded(verifyWeightUse(*this, getWeightAttr(),
                                  {result.getDimSize(1), input.getDimSize(1)},
                                  nullptr, symbolTable)) &&
        succeeded(verifyWeightUse(*this, getWeightScaleAttr(), {result.getDimSize(1)},
                                  Float32Type::get(getContext()), symbolTable)));
  return verifyWeightUse(*this, getWeightAttr(),
                         {result.getDimSize(1), input.getDimSize(1)},
                         input.getElementType(), symbolTable);
}

LogicalResult
FP8LinearOp::verifySymbolUses(SymbolTableCollection &symbolTable) {
  auto input = activation(getInput());
  auto result = activation(getResult());
  if (failed(verifySameTokens(*this, {getInput(), getInputScales(), getResult()})))
    return failure();
  Type f8 = input.getElementType(), f32 = Float32Type::get(getContext());
  if (failed(verifyWeightUse(*this, getWeightAttr(),
                             {result.getDimSize(1), input.getDimSize(1)}, f8,
                             symbolTable)))
    return failure();
  return verifyWeightUse(*this, getWeightScaleAttr(), {result.getDimSize(1)}, f32,
                         symbolTable);
}

LogicalResult
LayerNormQuantOp::verifySymbolUses(SymbolTableCollection &symbolTable) {
  auto input = activation(getInput());
  if (failed(verifySameTokens(*this, {getInput(), getValues(), getScales()})))
    return failure();
  return verifyWeightUse(*this, getWeightAttr(), {input.getDimSize(1)},
                         getNormType(), symbolTable);
}

LogicalResult QuantizeOp::verify() {
  if (activation(getInput()).getDimSize(1) != activation(getValues()).getDimSize(1))
    return emitOpError() << "quantized values must keep the input's width";
  return verifySameTokens(*this, {getInput(), getValues(), getScales()});
}

LogicalResult LogitsOp::verifySymbolUses(SymbolTableCollection &symbolTable) {
  auto input = activation(getInput());
  auto result = activation(getResult());
  if (failed(verifySameTokens(*this, {getInput(), getResult()})))
    return failure();
  return verifyWeightUse(*this, getWeightAttr(),
                         {result.getDimSize(1), input.getDimSize(1)},
                         input.getElementType(), symbolTable);
}

std::optional<int64_t> AttentionOp::getSlidingWindow() {
  if (auto sliding = dyn_cast<SlidingWindowAttr>(getWindow()))
    return sliding.getSize();
  return std::nullopt;
}

LogicalResult AttentionOp::verify() {
  int64_t heads = getNumHeads(), kvHeads = getNumKvHeads();
  int64_t headDim = getHeadDim();
  // Widths are heads x head_dim: keep the product far from overflow.
  constexpr int64_t kMaxWidth = int64_t(1) << 31;
  if (heads > kMaxWidth / headDim)
    return emitOpError() << "num_heads x head_dim must be at most " << kMaxWidth << ", found "
                         << heads << " x " << headDim;
  if (heads % kvHeads != 0)
    return emitOpError() << "num_kv_heads (" << kvHeads
                         << ") must divide num_heads (" << heads << ")";
  auto check = [&](Value v, StringRef what, int64_t width) -> LogicalResult {
    int64_t found = activation(v).getDimSize(1);
    if (found != width)
      return emitOpError() << what << " has " << found
                           << " features, expected " << width;
    return success();
  };
  if (failed(check(getQ(), "q", heads * headDim)) ||
      failed(check(getK(), "k", kvHeads * headDim)) ||
      failed(check(getV(), "v", kvHeads * headDim)) ||
      failed(check(getResult(), "result", heads * headDim)))
    return failure();
  Type element = activation(getQ()).getElementType();
  for (Value v : {getK(), getV(), getResult()})
    if (activation(v).getElementType() != element)
      return emitOpError() << "q, k, v and result must share an element type";
  if (hasRope() && headDim % 2 != 0)
    return emitOpError() << "rope needs an even head_dim, found " << headDim;
  // Each layer has its own KV cache: two attention ops of one step on one
  // slot would write the same K and V rows. (The lowerings take the step's
  // ops from one block.)
  if (Block *block = (*this)->getBlock())
    for (Operation &other : block->getOperations())
      if (auto attention = dyn_cast<AttentionOp>(other);
          attention && attention != *this && attention.getKvSlot() == getKvSlot())
        return emitOpError() << "kv_slot " << getKvSlot()
                             << " is also another attention op's: each layer needs its own";
  return verifySameTokens(*this,
                          {getQ(), getK(), getV(), getPositions(), getResult()});
}

LogicalResult ResidualSumOp::verify() {
  if (getInputs().size() < 2)
    return emitOpError() << "needs at least two inputs, found "
                         << getInputs().size();
  return success();
}
