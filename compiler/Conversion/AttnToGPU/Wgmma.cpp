//===- Wgmma.cpp - Hopper's warpgroup matrix multiply-accumulate
//-----------===//
//
// wgmma.mma_async (PTX ISA, "Asynchronous Warpgroup Level Matrix Multiply-
// Accumulate Instructions") as the prefill attention kernel uses it: bf16
// operands, f32 accumulators, A from registers, B from shared memory in the
// canonical layout without swizzle. MLIR's nvvm.wgmma.mma_async takes A
// from shared memory only, so the instructions are inline assembly.
//
//===----------------------------------------------------------------------===//

#include "Conversion/AttnToGPU/KernelGenerator.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"

#include <string>

namespace mlir::cohere2c::attn_to_gpu {

namespace {

/// "$first, ..., $(first + count - 1)".
std::string operandList(int64_t first, int64_t count) {
  std::string list;
  for (int64_t i = 0; i < count; ++i)
    list += (i ? ", $" : "$") + std::to_string(first + i);
  return list;
}

/// Constraints: `count` copies of `one`, each after a comma but the first
/// of the whole string.
void appendConstraints(std::string &constraints, const std::string &one,
                       int64_t count) {
  for (int64_t i = 0; i < count; ++i)
    constraints += (constraints.empty() ? "" : ",") + one;
}

} // namespace

Value KernelGenerator::wgmmaDescriptor(Value address, int64_t leadingBytes,
                                       int64_t strideBytes) {
  // Bits 0-13: address / 16; 16-29: the leading byte offset / 16; 32-45:
  // the stride byte offset / 16; 62-63: 0, no swizzle. A CTA's shared
  // addresses are below 2^18, so address / 16 fits its 14 bits.
  Type i64t = b.getI64Type();
  Value units = arith::ExtUIOp::create(
      b, i64t, arith::ShRUIOp::create(b, address, i32(4)));
  int64_t fields = (leadingBytes / 16) << 16 | (strideBytes / 16) << 32;
  return arith::OrIOp::create(b, units,
                              arith::ConstantIntOp::create(b, fields, 64));
}

SmallVector<Value> KernelGenerator::wgmmaChain(ArrayRef<SmallVector<Value>> a,
                                               ArrayRef<Value> bDescriptors,
                                               int64_t n, bool transposeB,
                                               ArrayRef<Value> accumulators) {
  // m64nNk16: a thread holds N / 2 accumulators (PTX ISA, "Register
  // Fragments and Shared Memory Matrix Layouts", the m16n8 C fragment of
  // each 8 columns of its warp's 16 rows) and 4 A registers (the m16n8k16
  // A fragment of its warp's rows).
  int64_t count = n / 2;
  bool accumulate = !accumulators.empty();
  assert(a.size() == bDescriptors.size() &&
         (!accumulate || (int64_t)accumulators.size() == count));
  std::string constraints;
  SmallVector<Value> operands;
  // Early-clobber: the outputs are written before every input is read.
  appendConstraints(constraints, accumulate ? "=f" : "=&f", count);
  if (accumulate) {
    for (int64_t i = 0; i < count; ++i)
      appendConstraints(constraints, std::to_string(i), 1);
    llvm::append_range(operands, accumulators);
  }
  int64_t aFirst = count + operands.size();
  for (const SmallVector<Value> &regs : a) {
    appendConstraints(constraints, "r", 4);
    llvm::append_range(operands, regs);
  }
  int64_t descFirst = count + operands.size();
  appendConstraints(constraints, "l", bDescriptors.size());
  llvm::append_range(operands, bDescriptors);
  int64_t zero = count + operands.size();
  appendConstraints(constraints, "r", 1);
  operands.push_back(i32(0));
  // scale-d is a predicate: `fresh` (false) makes the first product D = A B.
  std::string asmText = "{\n.reg .pred fresh, keep;\nsetp.ne.b32 fresh, $" +
                        std::to_string(zero) + ", 0;\nsetp.eq.b32 keep, $" +
                        std::to_string(zero) +
                        ", 0;\nwgmma.fence.sync.aligned;\n";
  for (size_t i = 0; i < a.size(); ++i)
    asmText += "wgmma.mma_async.sync.aligned.m64n" + std::to_string(n) +
               "k16.f32.bf16.bf16 {" + operandList(0, count) + "}, {" +
               operandList(aFirst + 4 * i, 4) + "}, $" +
               std::to_string(descFirst + i) +
               (i == 0 && !accumulate ? ", fresh" : ", keep") + ", 1, 1, " +
               (transposeB ? "1" : "0") + ";\n";
  asmText +=
      "wgmma.commit_group.sync.aligned;\nwgmma.wait_group.sync.aligned 0;\n}";
  // Shared memory is read: ordered against the barriers and copies around it.
  constraints += ",~{memory}";
  Type f32t = b.getF32Type();
  Type result = LLVM::LLVMStructType::getLiteral(
      b.getContext(), SmallVector<Type>(count, f32t));
  Value d = LLVM::InlineAsmOp::create(b, result, operands, asmText, constraints,
                                      /*has_side_effects=*/true,
                                      /*is_align_stack=*/false,
                                      LLVM::tailcallkind::TailCallKind::None,
                                      LLVM::AsmDialectAttr(), ArrayAttr())
                .getResult(0);
  SmallVector<Value> r;
  for (int64_t i = 0; i < count; ++i)
    r.push_back(LLVM::ExtractValueOp::create(b, d, ArrayRef<int64_t>{i}));
  return r;
}

void KernelGenerator::fenceSharedForAsyncProxy() {
  LLVM::InlineAsmOp::create(b, TypeRange{}, ValueRange{},
                            "fence.proxy.async.shared::cta;", "~{memory}",
                            /*has_side_effects=*/true, /*is_align_stack=*/false,
                            LLVM::tailcallkind::TailCallKind::None,
                            LLVM::AsmDialectAttr(), ArrayAttr());
}

} // namespace mlir::cohere2c::attn_to_gpu
