//===- Macro.h - {% macro %} as a callable value
//---------------------------===//
//
// A macro is a function value: calling it renders its body in a scope of
// its own, on the scope it was defined in, and returns the text. Arguments
// bind as jinja2's runtime.Macro binds them: positional first, then
// keywords by name, then defaults (evaluated at call time, in the macro's
// scope, so a default can use an earlier parameter); a parameter left out
// without default is Undefined; extra positional arguments go to `varargs`
// and extra keywords to `kwargs` when the body mentions them, else they are
// a TypeError.
//
//===----------------------------------------------------------------------===//
#ifndef COHERE2C_TEXT_CHAT_TEMPLATE_MACRO_H
#define COHERE2C_TEXT_CHAT_TEMPLATE_MACRO_H

#include "text/chat_template/Ast.h"
#include "text/chat_template/Scope.h"
#include "text/chat_template/Value.h"

#include <memory>

namespace cohere2c::text::jinja {

/// The value a {% macro %} statement binds to its name. `definition` must
/// outlive the value (the parsed template does); the macro does not own
/// `scope` (Interpreter::retain keeps it alive).
Value makeMacro(const MacroStmt &definition,
                const std::shared_ptr<Scope> &scope);

} // namespace cohere2c::text::jinja

#endif // COHERE2C_TEXT_CHAT_TEMPLATE_MACRO_H
