//===- Check.h - Checking CUDA and cuBLASLt calls in the cuda executor ----===//
#ifndef COHERE2C_RUNTIME_CUDA_CHECK_H
#define COHERE2C_RUNTIME_CUDA_CHECK_H

#include <string>

namespace cohere2c {

/// "api_->cuMemAlloc(&p, n)" -> "cuMemAlloc"
inline std::string calledFunction(const char *expression) {
  std::string s = expression;
  s = s.substr(0, s.find('('));
  size_t arrow = s.rfind("->");
  return arrow == std::string::npos ? s : s.substr(arrow + 2);
}

} // namespace cohere2c

// Checks a CUDA or cuBLASLt call through `api_` (a CudaApi pointer in
// scope); on failure returns the Status, which names the function called.
#define COHERE2C_CHECK(call)                                                   \
  do {                                                                         \
    Status s_ = api_->check((call), calledFunction(#call).c_str());            \
    if (!s_.ok())                                                              \
      return s_;                                                               \
  } while (0)

#endif // COHERE2C_RUNTIME_CUDA_CHECK_H
