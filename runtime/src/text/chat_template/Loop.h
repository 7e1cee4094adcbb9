//===- Loop.h - The `loop` variable of a for loop -------------------------===//
//
// jinja2's LoopContext: index, index0, revindex, revindex0, first, last,
// length, previtem, nextitem, depth, depth0, cycle(...) and changed(...).
//
// Items come from a source one at a time because the loop's `if` filter is
// evaluated lazily, between iterations, as jinja2 does: a body that updates
// a namespace changes what the filter accepts next. `last`, `nextitem` look
// one item ahead; `length` and `revindex` pull all remaining items (jinja2
// turns the iterator into a list for them).
//
//===----------------------------------------------------------------------===//
#ifndef COHERE2C_TEXT_CHAT_TEMPLATE_LOOP_H
#define COHERE2C_TEXT_CHAT_TEMPLATE_LOOP_H

#include "text/chat_template/Value.h"

#include <cstdint>
#include <deque>
#include <functional>
#include <optional>
#include <string_view>
#include <vector>

namespace cohere2c::text::jinja {

class LoopContext {
public:
  /// Returns the next item the loop accepts, or nullopt at the end.
  using Source = std::function<std::optional<Value>()>;

  explicit LoopContext(Source source) : source_(std::move(source)) {}

  /// Moves to the next item and stores it in `item`; false at the end.
  bool advance(Value &item);

  int64_t index0() const { return index0_; }
  int64_t length();
  bool isLast();

  /// Drops the source and the items held, ending the loop (and any cycle
  /// through them) when the render is over.
  void release();

  /// loop.NAME for `self`, a Value holding this loop: a number, a bool, an
  /// item, the callables cycle and changed, or Undefined for other names.
  static Value attribute(const Value &self, std::string_view name);

private:
  bool fill(size_t count);
  Value changed(std::vector<Value> args);

  Source source_;
  std::deque<Value> ahead_;
  bool exhausted_ = false;
  int64_t index0_ = -1;
  Value current_;
  Value previous_;
  bool hasPrevious_ = false;
  std::optional<std::vector<Value>> lastChanged_;

  friend class LoopMethod;
};

} // namespace cohere2c::text::jinja

#endif // COHERE2C_TEXT_CHAT_TEMPLATE_LOOP_H
