//===- Args.h - Arguments of a call, bound as Python binds them -----------===//
//
// Filters, tests, methods and globals take positional and keyword arguments
// with Python's rules: positional ones fill the parameters in order, keywords
// fill them by name, a parameter filled twice or an unknown keyword is a
// TypeError.
//
//===----------------------------------------------------------------------===//
#ifndef COHERE2C_TEXT_CHAT_TEMPLATE_ARGS_H
#define COHERE2C_TEXT_CHAT_TEMPLATE_ARGS_H

#include "text/chat_template/Value.h"

#include <initializer_list>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace cohere2c::text::jinja {

struct CallArgs {
  std::vector<Value> positional;
  std::vector<std::pair<std::string, Value>> keyword;
};

/// The arguments of one call bound to a signature's parameter names.
class BoundArgs {
public:
  /// `function` names the callee in errors. Throws a TemplateError for more
  /// positional arguments than parameters, an unknown keyword, or a
  /// parameter given twice.
  BoundArgs(std::string_view function, CallArgs &&args,
            std::initializer_list<std::string_view> params);

  /// The argument of parameter `i`, or nullptr when the call left it out.
  const Value *get(size_t i) const {
    return present_[i] ? &values_[i] : nullptr;
  }
  /// The argument of parameter `i`, or `fallback` when left out.
  Value getOr(size_t i, Value fallback) const {
    return present_[i] ? values_[i] : std::move(fallback);
  }
  /// The argument of parameter `i`; throws when the call left it out.
  const Value &require(size_t i) const;

private:
  std::string function_;
  std::vector<std::string_view> names_;
  std::vector<Value> values_;
  std::vector<bool> present_;
};

/// Throws unless `args` is empty: for callables without parameters.
void expectNoArgs(std::string_view function, const CallArgs &args);

} // namespace cohere2c::text::jinja

#endif // COHERE2C_TEXT_CHAT_TEMPLATE_ARGS_H
