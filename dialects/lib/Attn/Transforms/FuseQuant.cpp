//===- FuseQuant.cpp - Fuse producers with the FP8 quantization of their output
//
// attn-fuse-norm-quant: quantize(layer_norm(x)) -> layer_norm_quant(x)
// attn-fuse-swiglu-quant: quantize(swiglu(g, u)) -> swiglu_quant(g, u)
// The producer stays while other ops use its result; otherwise it is erased.
//
//===----------------------------------------------------------------------===//

#include "cohere2c/Dialect/Attn/IR/Attn.h"
#include "cohere2c/Dialect/Attn/Transforms/Passes.h"

#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::cohere2c::attn {
#define GEN_PASS_DEF_ATTNFUSENORMQUANT
#define GEN_PASS_DEF_ATTNFUSESWIGLUQUANT
#include "cohere2c/Dialect/Attn/Transforms/Passes.h.inc"
} // namespace mlir::cohere2c::attn

using namespace mlir;
using namespace mlir::cohere2c::attn;

namespace {

struct FuseNormQuantPattern : OpRewritePattern<QuantizeOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(QuantizeOp op, PatternRewriter &rewriter) const override {
    auto norm = op.getInput().getDefiningOp<LayerNormOp>();
    if (!norm)
      return rewriter.notifyMatchFailure(op, "input is not a layer_norm");
    Type normType = cast<RankedTensorType>(norm.getType()).getElementType();
    rewriter.replaceOpWithNewOp<LayerNormQuantOp>(
        op, op.getValues().getType(), op.getScales().getType(), norm.getInput(),
        norm.getWeightAttr(), norm.getEpsAttr(), TypeAttr::get(normType));
    return success();
  }
};

struct FuseSwiGLUQuantPattern : OpRewritePattern<QuantizeOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(QuantizeOp op, PatternRewriter &rewriter) const override {
    auto swiglu = op.getInput().getDefiningOp<SwiGLUOp>();
    if (!swiglu)
      return rewriter.notifyMatchFailure(op, "input is not a swiglu");
    rewriter.replaceOpWithNewOp<SwiGLUQuantOp>(op, op.getValues().getType(),
                                               op.getScales().getType(),
                                               swiglu.getGate(), swiglu.getUp());
    return success();
  }
};

template <typename Pattern>
LogicalResult applyOne(Operation *root) {
  RewritePatternSet patterns(root->getContext());
  patterns.add<Pattern>(root->getContext());
  return applyPatternsGreedily(root, std::move(patterns));
}

struct AttnFuseNormQuantPass : mlir::cohere2c::attn::impl::AttnFuseNormQuantBase<AttnFuseNormQuantPass> {
  void runOnOperation() override {
    if (failed(applyOne<FuseNormQuantPattern>(getOperation())))
      signalPassFailure();
  }
};

struct AttnFuseSwiGLUQuantPass : mlir::cohere2c::attn::impl::AttnFuseSwiGLUQuantBase<AttnFuseSwiGLUQuantPass> {
  void runOnOperation() override {
    if (failed(applyOne<FuseSwiGLUQuantPattern>(getOperation())))
      signalPassFailure();
  }
};

} // namespace
