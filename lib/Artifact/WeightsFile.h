//===- WeightsFile.h - The OUT.weights file format ------------------------===//
//
// cohere2c-compile writes OUT.weights beside OUT.so, cohere2c-run maps it.
// One header page, then the weights buffer in the artifact's WeightLayout,
// so that the data starts page-aligned and is mmapped in place:
//
//   offset  bytes  field
//   0       16     magic "COHERE2CWEIGHTS\0"
//   16      4      format version, little-endian uint32 (kWeightsFormatVersion)
//   20      4      zero
//   24      16     id: random bytes drawn by the compiler for this artifact
//   40      8      data size in bytes, little-endian uint64 (totalBytes)
//   48      4048   zero
//   4096           the weights buffer
//
// The artifact's manifest records the id (weights_id, 32 lowercase hex
// digits; empty when compiled from a config alone), so a stale OUT.weights,
// left by another compilation (another checkpoint of the same shapes, or an
// OUT.so since recompiled from a config alone), is refused rather than used.
//
//===----------------------------------------------------------------------===//
#ifndef COHERE2C_ARTIFACT_WEIGHTSFILE_H
#define COHERE2C_ARTIFACT_WEIGHTSFILE_H

#include "Support/Status.h"

#include <cstdint>
#include <string>

namespace cohere2c {

constexpr uint64_t kWeightsHeaderBytes = 4096;
constexpr uint32_t kWeightsFormatVersion = 1;

/// A new weights id: 16 bytes from std::random_device, as 32 lowercase hex
/// digits.
std::string newWeightsId();
/// Whether `id` is empty (no weights file) or 32 lowercase hex digits.
bool isWeightsId(const std::string &id);

/// Writes the header page (kWeightsHeaderBytes bytes at `header`) of a file
/// with id `id` (newWeightsId()) and `dataBytes` bytes of weights.
void writeWeightsHeader(void *header, const std::string &id,
                        uint64_t dataBytes);

/// Checks the file `path` of `fileBytes` bytes, whose first
/// min(fileBytes, kWeightsHeaderBytes) bytes are at `header`, against an
/// artifact whose manifest has weights_id `id` and a layout of `dataBytes`.
/// Errors name `path`: shorter than the header, no magic (not a weights
/// file, or one of an older cohere2c), another format version, a data size
/// other than `dataBytes` (another model or precision), a file size other
/// than header + data (cut short), another id (written for another
/// artifact). Each says to recompile or to pass --checkpoint or
/// --random-weights.
Status checkWeightsHeader(const void *header, uint64_t fileBytes,
                          const std::string &path, const std::string &id,
                          uint64_t dataBytes);

} // namespace cohere2c

#endif // COHERE2C_ARTIFACT_WEIGHTSFILE_H
