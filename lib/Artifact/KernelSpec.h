//===- KernelSpec.h - What a generated cuda kernel computes ---------------===//
//
// The cuda lowering generates one kernel per family and specialization; its
// symbol name is only a link between the launch plan and the kernel image.
// What a kernel computes is its KernelSpec: the family (which fixes the
// arguments, their order and the formula) and the values it was specialized
// on that change what it reads or writes. The compiler attaches the spec to
// each kernel (`#plan.kernel<...>` on the gpu.func), the manifest carries it
// with every launch, and the plan interpreter (the host reference of a plan)
// computes a launch from its spec, never from its name.
//
//===----------------------------------------------------------------------===//
#ifndef COHERE2C_ARTIFACT_KERNELSPEC_H
#define COHERE2C_ARTIFACT_KERNELSPEC_H

#include <array>
#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

namespace cohere2c {

// clang-format off
/// The kernel families. Arguments (in order) and what each computes:
///   Embedding           ids, table, out: out[t] = table[ids[t]]
///   LayerNorm           x, w, out: Cohere's LayerNorm (no bias), f32
///                       statistics
///   LayerNormQuantFP8   x, w, values, scales: LayerNorm then QuantizeFP8 of
///                       the f32 row
///   QuantizeFP8         x, values, scales: per-token e4m3 with scale
///                       max(amax / 448, 1 / (448 * 512))
///   SwiGLU              gate, up, out: silu(gate) * up
///   SwiGLUQuantFP8      gate, up, values, scales: SwiGLU then QuantizeFP8 of
///                       the f32 row
///   ResidualSum         inputs..., out: their sum in f32
///   GatherRows          x, rows, out: out[i] = x[rows[i]]
///   SampleTokens        logits, temperatures, noise_seeds, out: per row,
///                       the Gumbel-max token (GumbelNoise.h): the lowest
///                       index of the maximum of logits / T + noise, or of
///                       the logits where T = 0 (greedy); -1 where a logit
///                       is NaN or infinite
///   KVAppend            k, v, positions, seqs, tables, pool, slot,
///                       block_size, table_width [, q, q_rotated when rope]:
///                       k and v into the paged pool (k rotated)
///   Attention           q, positions, seqs, tables, pool, out, slot,
///                       block_size, table_width, splits, partials
///                       [, generated_rows]: flash-decoding, out with one
///                       split, else partials
///   AttentionPrefill    q, positions, seqs, tables, pool, out, slot,
///                       block_size, table_width, tokens, splits, partials,
///                       generated: tensor-core tiles
///   AttentionMerge      partials, out, splits[, generated_rows | generated]
///   Gemv, GemvFP8       x[, x_scales], w[, w_scales][, addend], out: one
///                       token's linear layer, plus the f32 addend (addend)
///   RandomUniform       out, count, seed, first, scale, offset: seeded random
///                       weights (RandomWeights.h), f32 or bf16 (outF32)
///   RandomUniformFP8    values, scales, cols, seed, first, scale: seeded
///                       random weights quantized rowwise, a block per row
// clang-format on
enum class KernelFamily : uint8_t {
  Embedding,
  LayerNorm,
  LayerNormQuantFP8,
  QuantizeFP8,
  SwiGLU,
  SwiGLUQuantFP8,
  ResidualSum,
  GatherRows,
  SampleTokens,
  KVAppend,
  Attention,
  AttentionPrefill,
  AttentionMerge,
  Gemv,
  GemvFP8,
  RandomUniform,
  RandomUniformFP8,
};

/// Which tokens a kernel's block rows are (Attention, AttentionMerge): every
/// token of the step; the generated ones, block row i for token
/// generated_rows[i]; or the prompt ones, generated tokens skipped.
enum class KernelRows : uint8_t { All, Generated, Prompt };

struct KernelSpec {
  KernelFamily family = KernelFamily::Embedding;
  KernelRows rows = KernelRows::All;
  /// KVAppend: k (and q, into q_rotated) rotated at their positions.
  bool rope = false;
  /// Attention, AttentionPrefill: the sliding window W it masks to (keys
  /// p - W < j <= p), 0 for full attention.
  int64_t window = 0;
  /// Gemv, GemvFP8, RandomUniform: the output is f32 (else bf16).
  bool outF32 = false;
  /// Gemv, GemvFP8: an f32 row is added to the product before it is stored
  /// (a projection summed into the residual stream; it may be out itself).
  bool addend = false;
  /// The blocks of a launch wait for each other (a grid-wide barrier:
  /// SwiGLUQuantFP8 at one token takes the row's amax over its blocks), so
  /// all of them must be resident on the device at once: the runtime
  /// refuses a device that cannot hold them rather than hang.
  bool gridSync = false;
  /// The row strides (elements) compiled in for the arguments that
  /// rowStrideArguments names, in that order: a projection read from a
  /// merged GEMM's output has that output's width as its stride.
  std::array<int64_t, 3> strides{};

  bool operator==(const KernelSpec &o) const {
    return family == o.family && rows == o.rows && rope == o.rope &&
           window == o.window && outF32 == o.outF32 && addend == o.addend &&
           gridSync == o.gridSync && strides == o.strides;
  }
};

/// The arguments whose row stride a kernel of this spec was compiled for:
/// KVAppend k, v (and q with rope); Attention and AttentionPrefill q; SwiGLU
/// and SwiGLUQuantFP8 gate, up. A launch must pass buffers of those widths.
std::vector<int> rowStrideArguments(const KernelSpec &spec);

/// The arguments a kernel of this spec writes, of the `count` it is given
/// (the family's list above); every other argument it only reads. A
/// KVAppend writes its pool (and q_rotated with rope), Attention and
/// AttentionPrefill their output and partials.
std::vector<int> outputArguments(const KernelSpec &spec, int count);

/// The family's name in plans and manifests ("layer_norm_quant_fp8", ...).
std::string_view kernelFamilyName(KernelFamily family);
std::optional<KernelFamily> kernelFamilyNamed(std::string_view name);
/// "all", "generated", "prompt".
std::string_view kernelRowsName(KernelRows rows);
std::optional<KernelRows> kernelRowsNamed(std::string_view name);

} // namespace cohere2c

#endif // COHERE2C_ARTIFACT_KERNELSPEC_H
