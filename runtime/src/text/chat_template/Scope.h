//===- Scope.h - Variables visible to part of a template
//-------------------===//
//
// jinja2's frames, simplified to a chain: a lookup walks from the innermost
// scope outwards, an assignment writes to the innermost one. The outermost
// scope holds the globals (range, namespace, raise_exception, ...) and the
// render's variables; the template's top-level {% set %} writes there too.
// Each for-loop iteration, macro call, {% with %}, {% set %} block and
// {% filter %} block runs in a scope of its own, so what it sets does not
// leak out, as in jinja2. A macro's scope sits on the scope it was defined
// in and sees that scope's variables as they are when it is called (jinja2
// compiles macros to Python closures).
//
//===----------------------------------------------------------------------===//
#ifndef COHERE2C_TEXT_CHAT_TEMPLATE_SCOPE_H
#define COHERE2C_TEXT_CHAT_TEMPLATE_SCOPE_H

#include "text/chat_template/Value.h"

#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace cohere2c::text::jinja {

class Scope {
public:
  explicit Scope(std::shared_ptr<Scope> parent = nullptr)
      : parent_(std::move(parent)) {}

  /// The innermost binding of `name`, or nullptr.
  const Value *find(const std::string &name) const {
    for (const Scope *scope = this; scope; scope = scope->parent_.get())
      for (const auto &[key, value] : scope->vars_)
        if (key == name)
          return &value;
    return nullptr;
  }

  void set(const std::string &name, Value value) {
    for (auto &[key, existing] : vars_) {
      if (key == name) {
        existing = std::move(value);
        return;
      }
    }
    vars_.emplace_back(name, std::move(value));
  }

  /// Forgets every variable of this scope (not of its parents).
  void clear() { vars_.clear(); }

private:
  std::shared_ptr<Scope> parent_;
  // Scopes hold a few variables (a loop's target and `loop`, a macro's
  // parameters; the outermost a few dozen): a vector searches them fastest.
  std::vector<std::pair<std::string, Value>> vars_;
};

} // namespace cohere2c::text::jinja

#endif // COHERE2C_TEXT_CHAT_TEMPLATE_SCOPE_H
