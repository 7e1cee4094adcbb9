//===- QuantizeFP8Rowwise.cpp - linear (fp8 weight) -> quantize + fp8_linear ===//

#include "cohere2c/Dialect/Attn/IR/Attn.h"
#include "cohere2c/Dialect/Attn/Transforms/Passes.h"

#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::cohere2c::attn {
#define GEN_PASS_DEF_ATTNQUANTIZEFP8ROWWISE
#include "cohere2c/Dialect/Attn/Transforms/Passes.h.inc"
} // namespace mlir::cohere2c::attn

using namespace mlir;
using namespace mlir::cohere2c::attn;

namespace {

struct QuantizeLinear : OpRewritePattern<LinearOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(LinearOp op, PatternRewriter &rewriter) const override {
    if (!op.getWeightScaleAttr())
      return rewriter.notifyMatchFailure(op, "weight not stored in fp8");
    auto input = cast<RankedTensorType>(op.getInput().getType());
    auto values = RankedTensorType::get(input.getShape(),
                                        Float8E4M3FNType::get(getContext()));
    auto scales = RankedTensorType::get({input.getDimSize(0)}, rewriter.getF32Type());
    auto quantize =
        QuantizeOp::create(rewriter, op.getLoc(), values, scales, op.getInput());
    rewriter.replaceOpWithNewOp<FP8LinearOp>(
        op, op.getType(), quantize.getValues(), quantize.getScales(),
        op.getWeightAttr(), op.getWeightScaleAttr());
    return success();
  }
};

struct AttnQuantizeFP8RowwisePass
    : mlir::cohere2c::attn::impl::AttnQuantizeFP8RowwiseBase<AttnQuantizeFP8RowwisePass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    patterns.add<QuantizeLinear>(&getContext());
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      signalPassFailure();
  }
};

} // namespace
