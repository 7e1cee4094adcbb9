//===- Macro.cpp - {% macro %} as a callable value
//-------------------------===//
#include "text/chat_template/Macro.h"

#include "text/chat_template/Args.h"
#include "text/chat_template/Error.h"
#include "text/chat_template/Interpreter.h"

#include <optional>

namespace cohere2c::text::jinja {

namespace {

class Macro : public Callable {
public:
  Macro(const MacroStmt &definition, std::weak_ptr<Scope> scope)
      : definition_(definition), scope_(std::move(scope)) {}
  const char *typeName() const override { return "Macro"; }
  std::string repr() const override {
    return "<Macro '" + definition_.name + "'>";
  }
  Value call(Interpreter &interpreter, CallArgs &&args) const override;

private:
  /// Binds the parameters in `scope` (jinja2's Macro.__call__).
  void bind(Interpreter &interpreter, const std::shared_ptr<Scope> &scope,
            CallArgs &&args) const;

  const MacroStmt &definition_;
  /// The defining scope, which owns this macro: a weak reference breaks
  /// the cycle.
  std::weak_ptr<Scope> scope_;
};

void Macro::bind(Interpreter &interpreter, const std::shared_ptr<Scope> &scope,
                 CallArgs &&args) const {
  const MacroStmt &def = definition_;
  const std::string &name = def.name;
  size_t count = def.params.size();
  size_t positional = std::min(args.positional.size(), count);
  if (args.positional.size() > count && !def.catchesVarargs)
    throw TemplateError("macro '" + name + "' takes not more than " +
                        std::to_string(count) + " argument(s)");
  std::vector<std::optional<Value>> values(count);
  for (size_t i = 0; i < positional; ++i)
    values[i] = args.positional[i];
  Dict extra;
  for (auto &[key, value] : args.keyword) {
    size_t i = positional;
    while (i < count && def.params[i] != key)
      ++i;
    if (i < count && !values[i])
      values[i] = value;
    else if (def.catchesKwargs)
      extra.set(Value::string(key), value);
    else
      throw TemplateError("macro '" + name + "' takes no keyword argument '" +
                          key + "'");
  }
  size_t firstDefault = count - def.defaults.size();
  for (size_t i = 0; i < count; ++i) {
    Value value;
    if (values[i])
      value = *values[i];
    else if (i >= firstDefault)
      value = interpreter.evaluate(*def.defaults[i - firstDefault]);
    else
      value = Value::undefined("parameter '" + def.params[i] +
                               "' was not provided");
    scope->set(def.params[i], std::move(value));
  }
  if (def.catchesVarargs)
    scope->set("varargs",
               Value::tuple({args.positional.begin() +
                                 static_cast<std::ptrdiff_t>(positional),
                             args.positional.end()}));
  if (def.catchesKwargs)
    scope->set("kwargs", Value::dict(std::move(extra)));
}

Value Macro::call(Interpreter &interpreter, CallArgs &&args) const {
  auto scope = std::make_shared<Scope>(scope_.lock());
  {
    // Defaults are evaluated in the macro's own scope.
    Interpreter::ScopeSwap swap(interpreter, scope);
    bind(interpreter, scope, std::move(args));
  }
  return Value::string(interpreter.capture(definition_.body, scope));
}

} // namespace

Value makeMacro(const MacroStmt &definition,
                const std::shared_ptr<Scope> &scope) {
  return Value::callable(std::make_shared<Macro>(definition, scope));
}

} // namespace cohere2c::text::jinja
