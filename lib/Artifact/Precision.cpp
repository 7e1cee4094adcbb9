//===- Precision.cpp ------------------------------------------------------===//

#include "Artifact/Precision.h"

namespace cohere2c {

namespace {

StatusOr<Precision> ofActivations(const std::string &name, bool host) {
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

} // namespace

StatusOr<Precision> Precision::forTarget(const std::string &name,
                                         const std::string &target,
                                         const std::string &kvCacheDtype) {
  StatusOr<Precision> p = ofActivations(name, target == "host");
  if (!p.ok())
    return p;
  p->kvCache = p->activations;
  if (kvCacheDtype == "auto")
    return p;
  if (kvCacheDtype != "fp8")
    return Status::error("unknown KV cache dtype '" + kvCacheDtype +
                         "', expected auto or fp8");
  if (target != "host")
    return Status::error("KV cache dtype fp8 is for the host target so far: "
                         "the cuda target's attention kernels read a bf16 "
                         "or f32 KV cache");
  p->e4m3KVCache = true;
  return p;
}

} // namespace cohere2c
