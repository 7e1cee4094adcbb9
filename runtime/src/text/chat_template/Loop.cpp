//===- Loop.cpp - The `loop` variable of a for loop -----------------------===//
#include "text/chat_template/Loop.h"

#include "text/chat_template/Args.h"
#include "text/chat_template/Error.h"

namespace cohere2c::text::jinja {

/// loop.cycle and loop.changed, bound to their loop.
class LoopMethod : public Callable {
public:
  LoopMethod(std::shared_ptr<LoopContext> loop, bool isCycle)
      : loop_(std::move(loop)), isCycle_(isCycle) {}
  const char *typeName() const override { return "method"; }
  std::string repr() const override {
    return std::string("<bound method LoopContext.") +
           (isCycle_ ? "cycle" : "changed") + ">";
  }
  Value call(Interpreter &, CallArgs &&args) const override {
    if (!args.keyword.empty())
      throw TemplateError(std::string(isCycle_ ? "cycle" : "changed") +
                          "() takes no keyword arguments");
    if (!isCycle_)
      return loop_->changed(std::move(args.positional));
    if (args.positional.empty())
      throw TemplateError("no items for cycling given");
    size_t n = args.positional.size();
    return args.positional[static_cast<size_t>(loop_->index0_) % n];
  }

private:
  std::shared_ptr<LoopContext> loop_;
  bool isCycle_;
};

bool LoopContext::fill(size_t count) {
  while (ahead_.size() < count && !exhausted_) {
    std::optional<Value> item = source_();
    if (!item)
      exhausted_ = true;
    else
      ahead_.push_back(std::move(*item));
  }
  return ahead_.size() >= count;
}

bool LoopContext::advance(Value &item) {
  if (!fill(1))
    return false;
  if (index0_ >= 0) {
    previous_ = current_;
    hasPrevious_ = true;
  }
  current_ = std::move(ahead_.front());
  ahead_.pop_front();
  ++index0_;
  item = current_;
  return true;
}

int64_t LoopContext::length() {
  fill(SIZE_MAX);
  return index0_ + 1 + static_cast<int64_t>(ahead_.size());
}

bool LoopContext::isLast() { return !fill(1); }

void LoopContext::release() {
  source_ = nullptr;
  exhausted_ = true;
  ahead_.clear();
  current_ = Value();
  previous_ = Value();
  lastChanged_.reset();
}

Value LoopContext::changed(std::vector<Value> args) {
  bool differs = !lastChanged_ || lastChanged_->size() != args.size();
  for (size_t i = 0; !differs && i < args.size(); ++i)
    differs = !equals((*lastChanged_)[i], args[i]);
  if (differs)
    lastChanged_ = std::move(args);
  return Value::boolean(differs);
}

Value LoopContext::attribute(const Value &self, std::string_view name) {
  LoopContext &loop = self.asLoop();
  int64_t index0 = loop.index0_;
  if (name == "index0")
    return Value::integer(index0);
  if (name == "index")
    return Value::integer(index0 + 1);
  if (name == "first")
    return Value::boolean(index0 == 0);
  if (name == "last")
    return Value::boolean(loop.isLast());
  if (name == "length")
    return Value::integer(loop.length());
  if (name == "revindex")
    return Value::integer(loop.length() - index0);
  if (name == "revindex0")
    return Value::integer(loop.length() - index0 - 1);
  if (name == "depth")
    return Value::integer(1);
  if (name == "depth0")
    return Value::integer(0);
  if (name == "previtem")
    return loop.hasPrevious_ ? loop.previous_
                             : Value::undefined("there is no previous item");
  if (name == "nextitem")
    return loop.fill(1) ? loop.ahead_.front()
                        : Value::undefined("there is no next item");
  if (name == "cycle" || name == "changed")
    return Value::callable(
        std::make_shared<LoopMethod>(self.shareLoop(), name == "cycle"));
  return Value::undefined("'LoopContext object' has no attribute '" +
                          std::string(name) + "'");
}

} // namespace cohere2c::text::jinja
