//===- EnumNames.h - A closed enum's names, both ways -----------*- C++ -*-===//
//
// The closed sets of the launch plan (step parameters, step inputs, kernel
// families and rows) are named in plans and manifests; each has one table of
// names in the order of its enum, read both ways here.
//
//===----------------------------------------------------------------------===//
#ifndef COHERE2C_SUPPORT_ENUMNAMES_H
#define COHERE2C_SUPPORT_ENUMNAMES_H

#include <array>
#include <cstddef>
#include <optional>
#include <string_view>

namespace cohere2c {

/// The name of `value` in `names` (indexed by the enum's values).
template <typename E, size_t N>
std::string_view enumName(const std::array<std::string_view, N> &names,
                          E value) {
  return names[(size_t)value];
}

/// The value named `name` in `names`, or none.
template <typename E, size_t N>
std::optional<E> enumNamed(const std::array<std::string_view, N> &names,
                           std::string_view name) {
  for (size_t i = 0; i < N; ++i)
    if (names[i] == name)
      return (E)i;
  return std::nullopt;
}

} // namespace cohere2c

#endif // COHERE2C_SUPPORT_ENUMNAMES_H
