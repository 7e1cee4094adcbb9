//===- PlanAttrs.td - Kernel and GEMM arguments ------------*- tablegen -*-===//
#ifndef COHERE2C_PLAN_ATTRS
#define COHERE2C_PLAN_ATTRS

include "cohere2c/Dialect/Plan/IR/PlanBase.td"

def Plan_StepParamParameter : AttrParameter<"::cohere2c::StepParam", "a step parameter"> {
  let parser = "::mlir::cohere2c::plan::parseStepParam($_parser)";
  let printer = "$_printer << ::cohere2c::stepParamName($_self)";
}

def Plan_PlanInputParameter : AttrParameter<"::cohere2c::PlanInput", "a step input"> {
  let parser = "::mlir::cohere2c::plan::parsePlanInput($_parser)";
  let printer = "$_printer << ::cohere2c::planInputName($_self)";
}

def Plan_ParamAttr : Plan_Attr<"Param", "param"> {
  let summary = "A step parameter: a size known when the step runs (i64)";
  let parameters = (ins Plan_StepParamParameter:$param);
  let assemblyFormat = "`<` $param `>`";
}

def Plan_InputAttr : Plan_Attr<"Input", "input"> {
  let summary = "A pointer the executor provides each step (ids, block tables, KV pool, logits)";
  let description = [{
    `#plan.input<ids>`; a KV group's block tables name the group, its index
    in the manifest's kv_groups (groups of equal size, the full layers'
    first): `#plan.input<kv_tables, group = 1>`. The KV pool, which every
    group draws from, names none: `#plan.input<kv_pool>`.
  }];
  let parameters = (ins Plan_PlanInputParameter:$input,
                        OptionalParameter<"std::optional<int64_t>">:$group);
  let assemblyFormat = "`<` $input (`,` `group` `=` $group^)? `>`";
  let genVerifyDecl = 1;
}

def Plan_ViewAttr : Plan_Attr<"View", "view"> {
  let summary = "Columns [column, column + width) of each row of a buffer (width 0: all)";
  let description = [{
    `#plan.view<@b3>` is the whole buffer; `#plan.view<@b3[128, 64]>` its
    columns 128 to 191 (a projection inside a merged GEMM's output), which a
    kernel reads with the buffer's width as its row stride.
  }];
  let parameters = (ins "::mlir::FlatSymbolRefAttr":$buffer,
                        "int64_t":$column, "int64_t":$width);
  let hasCustomAssemblyFormat = 1;
  let genVerifyDecl = 1;
}

def Plan_WeightAttr : Plan_Attr<"Weight", "weight"> {
  let summary = "A weight by name; `elements` > 0: a kernel reads that many from its start";
  let parameters = (ins "::mlir::StringAttr":$name,
                        DefaultValuedParameter<"int64_t", "0">:$elements);
  let assemblyFormat = "`<` $name (`,` $elements^)? `>`";
}

def Plan_KernelSpecParameter : AttrParameter<"::cohere2c::KernelSpec", "a kernel spec"> {
  let parser = "::mlir::cohere2c::plan::parseKernelSpec($_parser)";
  let printer = "::mlir::cohere2c::plan::printKernelSpec($_printer, $_self)";
}

def Plan_KernelAttr : Plan_Attr<"Kernel", "kernel"> {
  let summary = "What a generated kernel computes: its family and specialization";
  let description = [{
    Attached to each generated gpu.func as `plan.kernel`
    (lib/Artifact/KernelSpec.h says what each family computes and takes):
    `#plan.kernel<swiglu_quant_fp8, strides = [2048, 2048]>`,
    `#plan.kernel<attention, rows = generated, window = 4096, strides = [6144]>`,
    `#plan.kernel<kv_append, rope, strides = [6144, 6144, 6144]>`,
    `#plan.kernel<gemv_fp8, out_f32, addend>`. Omitted fields take their
    defaults (rows all, no rope, window 0 = full, bf16 output, no addend, no
    strides).
  }];
  let parameters = (ins Plan_KernelSpecParameter:$spec);
  let assemblyFormat = "`<` $spec `>`";
}

#endif // COHERE2C_PLAN_ATTRS
