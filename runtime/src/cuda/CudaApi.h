//===- CudaApi.h - The CUDA driver and cuBLASLt, loaded at run time -------===//
//
// cohere2c-run must start on machines without a GPU (host artifacts), so it
// never links libcuda or cuBLASLt: a cuda artifact loads them with dlopen.
// Every call goes through check(), which turns a failure into a Status
// naming the call and the driver's or cuBLASLt's error.
//
//===----------------------------------------------------------------------===//
#ifndef COHERE2C_RUNTIME_CUDA_CUDAAPI_H
#define COHERE2C_RUNTIME_CUDA_CUDAAPI_H

#include "Support/Status.h"

#include <cublasLt.h>
#include <cuda.h>

#include <memory>
#include <string>

namespace cohere2c {

// clang-format off
#define COHERE2C_CUDA_DRIVER_FUNCTIONS(X)                                      \
  X(cuInit) X(cuDeviceGet) X(cuDeviceGetName) X(cuDevicePrimaryCtxRetain)      \
  X(cuCtxSetCurrent) X(cuModuleLoadData) X(cuModuleGetFunction)                \
  X(cuLaunchKernelEx) X(cuMemAlloc) X(cuMemFree) X(cuMemcpyHtoDAsync)          \
  X(cuMemcpyDtoHAsync) X(cuMemsetD8Async) X(cuMemGetInfo) X(cuStreamCreate)    \
  X(cuStreamSynchronize) X(cuStreamBeginCapture) X(cuStreamEndCapture)         \
  X(cuGraphInstantiateWithFlags) X(cuGraphLaunch) X(cuGraphDestroy)            \
  X(cuGraphExecDestroy) X(cuGetErrorName) X(cuGetErrorString)                  \
  X(cuStreamDestroy) X(cuEventCreate) X(cuEventDestroy) X(cuEventRecord)       \
  X(cuStreamWaitEvent) X(cuEventSynchronize) X(cuMemHostAlloc)                 \
  X(cuMemFreeHost) X(cuDeviceGetAttribute)                                     \
  X(cuOccupancyMaxActiveBlocksPerMultiprocessor)
// clang-format on

#define COHERE2C_CUBLASLT_FUNCTIONS(X)                                         \
  X(cublasLtCreate) X(cublasLtMatmulDescCreate) X(cublasLtMatmulDescDestroy)   \
  X(cublasLtMatmulDescSetAttribute) X(cublasLtMatrixLayoutCreate)              \
  X(cublasLtMatrixLayoutDestroy) X(cublasLtMatmulPreferenceCreate)             \
  X(cublasLtMatmulPreferenceDestroy) X(cublasLtMatmulPreferenceSetAttribute)   \
  X(cublasLtMatmulAlgoGetHeuristic) X(cublasLtMatmulAlgoConfigSetAttribute)   \
  X(cublasLtMatmulAlgoCheck) X(cublasLtMatmul) X(cublasLtGetStatusString)

/// Function pointers into libcuda.so.1 and libcublasLt.so.13. Immutable once
/// loaded; the functions themselves are thread-safe as CUDA documents.
struct CudaApi {
#define COHERE2C_DECLARE(fn) decltype(&::fn) fn = nullptr;
  COHERE2C_CUDA_DRIVER_FUNCTIONS(COHERE2C_DECLARE)
  COHERE2C_CUBLASLT_FUNCTIONS(COHERE2C_DECLARE)
#undef COHERE2C_DECLARE

  /// Loads both libraries and initializes the driver. Errors say that this
  /// machine has no usable NVIDIA GPU and why (library missing, cuInit).
  static StatusOr<std::unique_ptr<CudaApi>> load();

  /// Ok, or an error "<call>: <name>: <description>".
  Status check(CUresult result, const char *call) const;
  Status check(cublasStatus_t status, const char *call) const;

private:
  void *driver_ = nullptr, *cublasLt_ = nullptr;
};

} // namespace cohere2c

#endif // COHERE2C_RUNTIME_CUDA_CUDAAPI_H
