//===- Globals.cpp - The functions every chat template can call -----------===//
#include "text/chat_template/Globals.h"

#include "text/chat_template/Args.h"
#include "text/chat_template/Error.h"
#include "text/chat_template/Interpreter.h"
#include "text/chat_template/Operators.h"

#include <ctime>

namespace cohere2c::text::jinja {

namespace {

/// jinja2.sandbox.MAX_RANGE
constexpr int64_t kMaxRange = 100000;

using GlobalFn = Value (*)(Interpreter &, CallArgs &&);

class Global : public Callable {
public:
  Global(const char *name, GlobalFn fn) : name_(name), fn_(fn) {}
  const char *typeName() const override { return "function"; }
  std::string repr() const override {
    return std::string("<function ") + name_ + ">";
  }
  Value call(Interpreter &interpreter, CallArgs &&args) const override {
    return fn_(interpreter, std::move(args));
  }

private:
  const char *name_;
  GlobalFn fn_;
};

int64_t rangeArg(const Value &v) {
  if (!v.isIntegral())
    throw TemplateError("'" + typeName(v) +
                        "' object cannot be interpreted as an integer");
  return v.asInt();
}

// jinja2.sandbox.safe_range
Value range(Interpreter &, CallArgs &&args) {
  if (!args.keyword.empty())
    throw TemplateError("range() takes no keyword arguments");
  const std::vector<Value> &a = args.positional;
  if (a.empty() || a.size() > 3)
    throw TemplateError("range expected at most 3 arguments, got " +
                        std::to_string(a.size()));
  int64_t start = a.size() == 1 ? 0 : rangeArg(a[0]);
  int64_t stop = rangeArg(a.size() == 1 ? a[0] : a[1]);
  int64_t step = a.size() == 3 ? rangeArg(a[2]) : 1;
  if (step == 0)
    throw TemplateError("range() arg 3 must not be zero");
  std::vector<Value> items;
  for (int64_t i = start; step > 0 ? i < stop : i > stop;) {
    if (static_cast<int64_t>(items.size()) >= kMaxRange)
      throw TemplateError("Range too big. The sandbox blocks ranges larger "
                          "than MAX_RANGE (100000).");
    items.push_back(Value::integer(i));
    if (__builtin_add_overflow(i, step, &i))
      break;
  }
  return Value::list(std::move(items));
}

/// dict(...) and namespace(...): a mapping or pairs, then keywords.
Dict mappingOf(const char *function, CallArgs &&args) {
  if (args.positional.size() > 1)
    throw TemplateError(std::string(function) +
                        " expected at most 1 argument, got " +
                        std::to_string(args.positional.size()));
  Dict dict;
  if (!args.positional.empty()) {
    const Value &source = args.positional[0];
    if (source.kind() == Value::Kind::Dict) {
      dict = source.asDict();
    } else {
      for (const Value &pair : iterate(source)) {
        std::vector<Value> kv = iterate(pair);
        if (kv.size() != 2)
          throw TemplateError("dictionary update sequence element has length " +
                              std::to_string(kv.size()) + "; 2 is required");
        dict.set(kv[0], kv[1]);
      }
    }
  }
  for (auto &[key, value] : args.keyword)
    dict.set(Value::string(key), std::move(value));
  return dict;
}

Value dict(Interpreter &, CallArgs &&args) {
  return Value::dict(mappingOf("dict", std::move(args)));
}

Value namespace_(Interpreter &interpreter, CallArgs &&args) {
  auto ns = std::make_shared<Namespace>();
  ns->attributes = mappingOf("namespace", std::move(args));
  interpreter.track(ns);
  return Value::ns(std::move(ns));
}

// transformers: raise TemplateError(message)
Value raiseException(Interpreter &, CallArgs &&args) {
  BoundArgs bound("raise_exception", std::move(args), {"message"});
  throw RaisedError(toStr(bound.require(0)));
}

// transformers: datetime.now().strftime(format)
Value strftimeNow(Interpreter &, CallArgs &&args) {
  BoundArgs bound("strftime_now", std::move(args), {"format"});
  const Value &format = bound.require(0);
  if (!format.isString())
    throw TemplateError("strftime() argument 1 must be str, not " +
                        typeName(format));
  std::time_t now = std::time(nullptr);
  std::tm local{};
  localtime_r(&now, &local);
  std::string out(256, '\0');
  size_t n =
      std::strftime(out.data(), out.size(), format.asString().c_str(), &local);
  if (n == 0 && !format.asString().empty())
    throw TemplateError("strftime_now: the formatted time is too long");
  out.resize(n);
  return Value::string(std::move(out));
}

} // namespace

void addGlobals(Scope &scope) {
  static const std::pair<const char *, GlobalFn> kGlobals[] = {
      {"range", range},
      {"dict", dict},
      {"namespace", namespace_},
      {"raise_exception", raiseException},
      {"strftime_now", strftimeNow},
  };
  for (const auto &[name, fn] : kGlobals)
    scope.set(name, Value::callable(std::make_shared<Global>(name, fn)));
}

} // namespace cohere2c::text::jinja
