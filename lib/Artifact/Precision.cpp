//===- Precision.cpp ------------------------------------------------------===//

#include "Artifact/Precision.h"

namespace cohere2c {

StatusOr<Precision> Precision::forTarget(const std::string &name,
                                         const std::string &target) {
  bool host = target == "host";
  if (name == "f32")
    return Precision{name, DType::F32, false};
  if (name == "bf16") {
    if (host)
      return Status::error("precision bf16 is for the cuda target; the host "
                           "target computes in f32 or fp8-rowwise");
    return Precision{name, DType::BF16, false};
  }
  if (name == "fp8-rowwise")
    return Precision{name, host ? DType::F32 : DType::BF16, true};
  return Status::error("unknown precision '" + name +
                       "', expected f32, bf16 or fp8-rowwise");
}

} // namespace cohere2c
