//===- AttnToHost.h - Lower the attn step function to host loops -*- C++ -*-===//
#ifndef COHERE2C_CONVERSION_ATTNTOHOST_H
#define COHERE2C_CONVERSION_ATTNTOHOST_H

#include "mlir/Pass/Pass.h"

#include <memory>

namespace mlir::cohere2c {

/// Replaces the attn step function by plain loops (scf, memref, arith, math)
/// over the host step ABI, and erases the attn.weight declarations (their
/// offsets become constants). The lowered function, with a C interface
/// (`_mlir_ciface_cohere2c_step`, memrefs passed as descriptors by pointer):
///
///   cohere2c_step(
///     weights:        memref<?xi8>    the weights buffer (WeightLayout)
///     ids:            memref<?xi32>   [T] token ids of this step
///     positions:      memref<?xi32>   [T] position of each token in its
///     sequence seqs:           memref<?xi32>   [T] row of the token's sequence
///     in the tables kv_tables:      memref<?x?x?xi32> [G, S, blocks] block
///     tables of each
///                                       KV group (the manifest's kv_groups)
///     kv_pool:        memref<?xf32>   the block pool of every group
///     logit_rows:     memref<?xi32>   [R] tokens whose logits are wanted
///     logits:         memref<?x?xf32> [R, vocab] out
///     block_size:     i64             tokens per KV block)
///
/// The pool is [blocks][layers of a group][K, V][block_size][KV
/// heads][head_dim] (Manifest.h), every group's blocks drawn from it. Token t
/// at position p of sequence row s has its K and V, for a layer of group g,
/// in block kv_tables[g][s][p / block_size], slot p % block_size. The step
/// writes the K and V of its tokens first, then attends, so a token sees the
/// tokens of its own step before it: prefill chunks and decode steps are one
/// path.
#define GEN_PASS_DECL_CONVERTATTNTOHOST
#include "Conversion/Passes.h.inc"

} // namespace mlir::cohere2c

#endif // COHERE2C_CONVERSION_ATTNTOHOST_H
