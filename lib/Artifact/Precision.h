//===- Precision.h - How a precision stores a model on a target -----------===//
//
// docs/ARCHITECTURE.md, "Precision":
//   f32          everything f32 (the host target, exact tests);
//   bf16         bf16 weights, activations and KV cache, f32 accumulation and
//                norm statistics (cuda only);
//   fp8-rowwise  linear weights in float8 e4m3fn with one scale per output
//                channel (amax / 448), activations quantized per token at run
//                time; embedding, norms and KV cache as bf16 on cuda, f32 on
//                the host (which emulates the FP8 arithmetic exactly);
// and, whatever the precision, the KV cache's (--kv-cache-dtype):
//   auto         as above;
//   fp8          every K and V value rounded to float8 e4m3fn at scale 1
//                (saturating at +-448) as it is stored, as other engines'
//                fp8 KV caches with unit scales: half the bytes of bf16 for
//                the reads that bound decode attention at large batch, at a
//                cost measured on the trained model (bench/RESULTS.md). The
//                host target keeps the rounded values in f32; the cuda
//                target's attention kernels read bf16 only, so far.
//
//===----------------------------------------------------------------------===//
#ifndef COHERE2C_ARTIFACT_PRECISION_H
#define COHERE2C_ARTIFACT_PRECISION_H

#include "Model/SafeTensors.h"
#include "Support/Status.h"

#include <string>

namespace cohere2c {

/// FP8 rowwise (OCP FP8 e4m3fn, bias 7, no infinities, S.1111.111 NaN): its
/// largest finite value, the floor of a weight row's amax (an all-zero row
/// gets a finite scale: max(amax, floor) / kE4M3Max) and the floor of a
/// token's scale (max(amax / kE4M3Max, floor): an all-zero token quantizes
/// to zeros, not NaN; docs/ARCHITECTURE.md, Precision, and the recipe's
/// float64 emulation in bench/fp8_precision.py use the same). One
/// definition for the
/// weight packer, the device weight fill and both lowerings' quantizers.
inline constexpr double kE4M3Max = 448.0;
inline constexpr double kWeightAmaxFloor = 1e-12;
inline constexpr double kTokenScaleFloor = 1.0 / (kE4M3Max * 512.0);

struct Precision {
  std::string name;
  /// Embedding, norm weights and activations.
  DType activations = DType::F32;
  /// Linear weights stored in e4m3 with rowwise scales.
  bool fp8Linear = false;
  /// The KV cache's element as stored, and whether its values are rounded
  /// to e4m3 (KV cache dtype fp8).
  DType kvCache = DType::F32;
  bool e4m3KVCache = false;

  /// Errors name the precision, the KV cache dtype and the target: an
  /// unknown precision or KV cache dtype, bf16 on the host target, fp8 KV on
  /// the cuda target.
  static StatusOr<Precision>
  forTarget(const std::string &name, const std::string &target,
            const std::string &kvCacheDtype = "auto");
};

} // namespace cohere2c

#endif // COHERE2C_ARTIFACT_PRECISION_H
