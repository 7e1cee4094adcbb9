//===- Args.cpp - Arguments of a call, bound as Python binds them ---------===//
#include "text/chat_template/Args.h"

#include "text/chat_template/Error.h"

namespace cohere2c::text::jinja {

BoundArgs::BoundArgs(std::string_view function, CallArgs &&args,
                     std::initializer_list<std::string_view> params)
    : function_(function), names_(params), values_(params.size()),
      present_(params.size(), false) {
  if (args.positional.size() > names_.size())
    throw TemplateError(function_ + "() takes at most " +
                        std::to_string(names_.size()) + " argument(s) (" +
                        std::to_string(args.positional.size()) + " given)");
  for (size_t i = 0; i < args.positional.size(); ++i) {
    values_[i] = std::move(args.positional[i]);
    present_[i] = true;
  }
  for (auto &[name, value] : args.keyword) {
    size_t i = 0;
    while (i < names_.size() && names_[i] != name)
      ++i;
    if (i == names_.size())
      throw TemplateError(
          function_ + "() got an unexpected keyword argument '" + name + "'");
    if (present_[i])
      throw TemplateError(function_ + "() got multiple values for argument '" +
                          name + "'");
    values_[i] = std::move(value);
    present_[i] = true;
  }
}

const Value &BoundArgs::require(size_t i) const {
  if (!present_[i])
    throw TemplateError(function_ + "() missing required argument '" +
                        std::string(names_[i]) + "'");
  return values_[i];
}

void expectNoArgs(std::string_view function, const CallArgs &args) {
  if (!args.positional.empty() || !args.keyword.empty())
    throw TemplateError(std::string(function) + "() takes no arguments");
}

} // namespace cohere2c::text::jinja
