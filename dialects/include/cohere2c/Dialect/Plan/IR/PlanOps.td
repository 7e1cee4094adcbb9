//===- PlanOps.td - plan dialect operations ----------------*- tablegen -*-===//
#ifndef COHERE2C_PLAN_OPS
#define COHERE2C_PLAN_OPS

include "cohere2c/Dialect/Plan/IR/PlanAttrs.td"
include "mlir/IR/SymbolInterfaces.td"
include "mlir/IR/RegionKindInterface.td"

def Plan_StepOp : Plan_Op<"step", [SymbolTable, NoTerminator, SingleBlock,
    NoRegionArguments, HasParent<"ModuleOp">]> {
  let summary = "The launch plan of one model step";
  let description = [{
    Buffers and steps, in the order the runtime replays them.

    ```mlir
    plan.step {
      plan.buffer @b0 : 128 x bf16, rows <tokens>
      plan.launch @cohere2c_kernels::@embedding_bf16_bf16_128 grid(<tokens>, 1) block(256)
          [#plan.input<ids>, #plan.weight<"model.embed_tokens.weight">, #plan.view<@b0>]
    }
    ```
  }];
  let regions = (region SizedRegion<1>:$body);
  let assemblyFormat = "attr-dict-with-keyword $body";
  let hasVerifier = 1;
}

def Plan_BufferOp : Plan_Op<"buffer", [Symbol, HasParent<"StepOp">]> {
  let summary = "An activation buffer: [rows, width] of dtype, rows a step parameter";
  let arguments = (ins SymbolNameAttr:$sym_name, ConfinedAttr<I64Attr, [IntPositive]>:$width,
                       TypeAttr:$dtype, Plan_ParamAttr:$rows);
  let assemblyFormat = "$sym_name `:` $width `x` $dtype `,` `rows` $rows attr-dict";
}

def Plan_LaunchOp : Plan_Op<"launch", [HasParent<"StepOp">]> {
  let summary = "A kernel launch: grid (grid_x, grid_y), block (block_x)";
  let description = [{
    `spec` says what the kernel computes (its family: which arguments in
    which order, and the values it was specialized on); the symbol only
    names its code. grid_x is a step parameter; a launch whose grid_x is 0
    is skipped. `side`: runs on the side stream (between a fork and its
    join). The verifier checks the arguments the spec compiled row strides
    for (KernelSpec.h, rowStrideArguments) are views of buffers that wide.
  }];
  let arguments = (ins SymbolRefAttr:$kernel, Plan_KernelAttr:$spec, Plan_ParamAttr:$grid_x,
                       ConfinedAttr<I64Attr, [IntMinValue<1>, IntMaxValue<65535>]>:$grid_y,
                       ConfinedAttr<I64Attr, [IntMinValue<1>, IntMaxValue<1024>]>:$block_x,
                       ArrayAttr:$args, UnitAttr:$side);
  let assemblyFormat = [{
    $kernel $spec `grid` `(` $grid_x `,` $grid_y `)` `block` `(` $block_x `)` $args attr-dict
  }];
  let hasVerifier = 1;
}

def Plan_GemmOp : Plan_Op<"gemm", [HasParent<"StepOp">]> {
  let summary = "c[m, n] = alpha * a[m, k] @ weight[n, k]^T [+ addend[m, n]] (cuBLASLt)";
  let description = [{
    m is a step parameter (m = 0: skipped). args = [a, c] or, FP8 rowwise
    (weight_scale names the weight's per-output-channel scales), [a, c,
    a's per-token scales]: c[m, n] = alpha * a_scale[m] * w_scale[n] *
    sum_k a[m, k] w[n, k]. The weight may span the entries laid out after
    it (projections of one input merged into one GEMM). `plus`: the last
    argument is an addend of c's shape and dtype, added in the GEMM's
    epilogue (beta = 1; it may be c itself): a projection summed into the
    residual stream without a kernel of its own.
  }];
  let arguments = (ins StrAttr:$weight, OptionalAttr<StrAttr>:$weight_scale,
                       Plan_ParamAttr:$m, ConfinedAttr<I64Attr, [IntPositive]>:$n,
                       ConfinedAttr<I64Attr, [IntPositive]>:$k, F64Attr:$alpha,
                       ArrayAttr:$args, UnitAttr:$side, UnitAttr:$plus);
  let assemblyFormat = [{
    $weight (`scaled` $weight_scale^)? `m` `(` $m `)` `n` `(` $n `)` `k` `(` $k `)`
    `alpha` `(` $alpha `)` (`plus` $plus^)? $args attr-dict
  }];
  let hasVerifier = 1;
}

def Plan_ForkOp : Plan_Op<"fork", [HasParent<"StepOp">]> {
  let summary = "The side stream starts from the main stream's work so far";
  let assemblyFormat = "attr-dict";
}

def Plan_JoinOp : Plan_Op<"join", [HasParent<"StepOp">]> {
  let summary = "The main stream waits for the side stream";
  let assemblyFormat = "attr-dict";
}

#endif // COHERE2C_PLAN_OPS
