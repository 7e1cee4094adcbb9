//===- CudaApi.cpp --------------------------------------------------------===//

#include "cuda/CudaApi.h"

#include <cstdlib>
#include <dlfcn.h>
#include <vector>

namespace cohere2c {

// cuda.h maps names to versioned symbols (cuMemAlloc -> cuMemAlloc_v2):
// stringify after expansion to look up the symbol the header means.
#define COHERE2C_STR2(x) #x
#define COHERE2C_STR(x) COHERE2C_STR2(x)

namespace {

void *openFirst(const std::vector<std::string> &names, std::string &errors) {
  for (const std::string &name : names) {
    if (void *handle = dlopen(name.c_str(), RTLD_NOW | RTLD_LOCAL))
      return handle;
    errors += (errors.empty() ? "" : "; ") + std::string(dlerror());
  }
  return nullptr;
}

} // namespace

StatusOr<std::unique_ptr<CudaApi>> CudaApi::load() {
  auto api = std::make_unique<CudaApi>();
  std::string errors;
  api->driver_ = openFirst({"libcuda.so.1"}, errors);
  if (!api->driver_)
    return Status::error("this machine has no usable NVIDIA GPU driver: " + errors);
  std::vector<std::string> cublasNames = {"libcublasLt.so.13"};
  for (const char *var : {"CUDA_HOME", "CUDA_PATH"})
    if (const char *dir = std::getenv(var))
      cublasNames.push_back(std::string(dir) + "/lib64/libcublasLt.so.13");
  cublasNames.push_back("/usr/local/cuda/lib64/libcublasLt.so.13");
  api->cublasLt_ = openFirst(cublasNames, errors);
  if (!api->cublasLt_)
    return Status::error("cannot load cuBLASLt 13: " + errors);
#define COHERE2C_LOAD_FROM(lib, fn)                                            \
  api->fn = reinterpret_cast<decltype(api->fn)>(dlsym(api->lib, COHERE2C_STR(fn))); \
  if (!api->fn)                                                                \
    return Status::error(std::string("missing CUDA symbol ") + COHERE2C_STR(fn));
#define COHERE2C_LOAD_DRIVER(fn) COHERE2C_LOAD_FROM(driver_, fn)
#define COHERE2C_LOAD_CUBLASLT(fn) COHERE2C_LOAD_FROM(cublasLt_, fn)
  COHERE2C_CUDA_DRIVER_FUNCTIONS(COHERE2C_LOAD_DRIVER)
  COHERE2C_CUBLASLT_FUNCTIONS(COHERE2C_LOAD_CUBLASLT)
#undef COHERE2C_LOAD_CUBLASLT
#undef COHERE2C_LOAD_DRIVER
#undef COHERE2C_LOAD_FROM
  CUresult init = api->cuInit(0);
  if (init != CUDA_SUCCESS)
    return Status::error("this machine has no usable NVIDIA GPU: " +
                         api->check(init, "cuInit").message());
  return api;
}

Status CudaApi::check(CUresult result, const char *call) const {
  if (result == CUDA_SUCCESS)
    return Status::success();
  const char *name = "?", *text = "?";
  cuGetErrorName(result, &name);
  cuGetErrorString(result, &text);
  return Status::error(std::string(call) + ": " + name + ": " + text);
}

Status CudaApi::check(cublasStatus_t status, const char *call) const {
  if (status == CUBLAS_STATUS_SUCCESS)
    return Status::success();
  return Status::error(std::string(call) + ": " + cublasLtGetStatusString(status));
}

} // namespace cohere2c
