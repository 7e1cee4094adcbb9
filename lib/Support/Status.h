//===- Status.h - Errors as values, shared by compiler and runtime --------===//
//
// lib/ is linked into both the compiler (built without exceptions, like the
// LLVM/MLIR packages) and the runtime (which never links LLVM), so errors are
// plain values: a Status is ok or carries one message, and StatusOr<T> holds a
// T or the Status that explains why there is none. Messages name the file, the
// field or tensor, what was expected and what was found, e.g.
//   "config.json: num_key_value_heads (5) must divide num_attention_heads (32)".
//
//===----------------------------------------------------------------------===//
#ifndef COHERE2C_SUPPORT_STATUS_H
#define COHERE2C_SUPPORT_STATUS_H

#include <cassert>
#include <optional>
#include <string>
#include <utility>

namespace cohere2c {

class [[nodiscard]] Status {
public:
  static Status success() { return Status(); }
  static Status error(std::string message) {
    Status s;
    s.message_ = std::move(message);
    s.failed_ = true;
    return s;
  }
  bool ok() const { return !failed_; }
  const std::string &message() const { return message_; }

private:
  bool failed_ = false;
  std::string message_;
};

template <typename T> class [[nodiscard]] StatusOr {
public:
  StatusOr(T value) : value_(std::move(value)) {}
  StatusOr(Status status) : status_(std::move(status)) {
    assert(!status_.ok() && "StatusOr needs a value or an error");
  }
  bool ok() const { return value_.has_value(); }
  const Status &status() const { return status_; }
  T &operator*() { return *value_; }
  const T &operator*() const { return *value_; }
  T *operator->() { return &*value_; }
  const T *operator->() const { return &*value_; }

private:
  std::optional<T> value_;
  Status status_;
};

} // namespace cohere2c

#endif // COHERE2C_SUPPORT_STATUS_H
