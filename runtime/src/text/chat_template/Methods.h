//===- Methods.h - Methods of str, dict and list values -------------------===//
//
// What `obj.name(...)` calls when obj is a str, dict, list or tuple: the
// Python methods, as jinja2's sandbox exposes them. A name that is a Python
// method of the type resolves to the method even where a dict has a key of
// that name (jinja2's getattr prefers attributes). Methods that modify a
// list or dict (append, update, pop, ...) are refused as
// ImmutableSandboxedEnvironment refuses them.
//
// Implemented: str: strip lstrip rstrip split rsplit splitlines startswith
// endswith upper lower title capitalize casefold swapcase replace find rfind
// index rindex count join format center ljust rjust zfill partition
// rpartition removeprefix removesuffix isdigit isdecimal isnumeric isalpha
// isalnum isspace islower isupper; dict: items keys values get copy;
// list/tuple: count index, list.copy. Other Python methods of these types
// fail when called.
//
//===----------------------------------------------------------------------===//
#ifndef COHERE2C_TEXT_CHAT_TEMPLATE_METHODS_H
#define COHERE2C_TEXT_CHAT_TEMPLATE_METHODS_H

#include "text/chat_template/Value.h"

#include <string>
#include <string_view>

namespace cohere2c::text::jinja {

enum class MethodKind {
  /// Not a method of the value's type.
  None,
  /// A method the sandbox lets templates call.
  Safe,
  /// A method the sandbox refuses (list.append, dict.update, _private).
  Unsafe,
};

MethodKind lookupMethod(const Value &object, std::string_view name);

/// `object.name` for a Safe method: a callable bound to `object`.
Value boundMethod(const Value &object, const std::string &name);

} // namespace cohere2c::text::jinja

#endif // COHERE2C_TEXT_CHAT_TEMPLATE_METHODS_H
