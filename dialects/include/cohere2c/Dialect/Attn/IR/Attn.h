//===- Attn.h - The attn dialect ---------------------------------*- C++ -*-===//
//
// The Cohere2 model as ops over [tokens, features] tensors, with each
// layer's window and position encoding as attributes (AttnOps.td).
//
//===----------------------------------------------------------------------===//
#ifndef COHERE2C_DIALECT_ATTN_IR_ATTN_H
#define COHERE2C_DIALECT_ATTN_IR_ATTN_H

#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Dialect.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Interfaces/InferTypeOpInterface.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#include "cohere2c/Dialect/Attn/IR/AttnDialect.h.inc"

#define GET_ATTRDEF_CLASSES
#include "cohere2c/Dialect/Attn/IR/AttnAttrs.h.inc"

#define GET_OP_CLASSES
#include "cohere2c/Dialect/Attn/IR/AttnOps.h.inc"

#endif // COHERE2C_DIALECT_ATTN_IR_ATTN_H
