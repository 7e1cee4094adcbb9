//===- ReuseBuffers.cpp - plan-reuse-buffers ------------------------------===//
//
// Memory planning of a step: buffers whose lifetimes (from the first step
// naming them to the last, extended to the join where that lies between a
// fork and its join) do not overlap share one buffer of their shape, and the
// buffers left are renamed b0, b1, ... in order of declaration.
//
//===----------------------------------------------------------------------===//

#include "cohere2c/Dialect/Plan/IR/Plan.h"
#include "cohere2c/Dialect/Plan/Transforms/Passes.h"

#include <map>
#include <tuple>

namespace mlir::cohere2c::plan {
#define GEN_PASS_DEF_PLANREUSEBUFFERS
#include "cohere2c/Dialect/Plan/Transforms/Passes.h.inc"
} // namespace mlir::cohere2c::plan

using namespace mlir;
using namespace mlir::cohere2c::plan;

namespace {

/// The buffers a step names, each once, in argument order.
SmallVector<StringAttr> buffersOf(Operation &step) {
  SmallVector<StringAttr> names;
  if (auto args = step.getAttrOfType<ArrayAttr>("args"))
    for (Attribute a : args)
      if (auto view = dyn_cast<ViewAttr>(a))
        if (!llvm::is_contained(names, view.getBuffer().getAttr()))
          names.push_back(view.getBuffer().getAttr());
  return names;
}

/// The buffers that become free at each step: after the last step naming
/// them, or at the join after it when that step lies between a fork and its
/// join. In step and argument order, so that the plan does not depend on
/// where the attributes happen to lie in memory.
std::vector<SmallVector<StringAttr>> freePoints(ArrayRef<Operation *> steps) {
  DenseMap<StringAttr, int64_t> lastUse;
  for (auto [i, step] : llvm::enumerate(steps))
    for (StringAttr name : buffersOf(*step))
      lastUse[name] = i;
  std::vector<SmallVector<StringAttr>> freeAt(steps.size());
  int64_t joinAfter = -1;
  for (int64_t i = (int64_t)steps.size() - 1; i >= 0; --i) {
    if (isa<JoinOp>(steps[i]))
      joinAfter = i;
    else if (isa<ForkOp>(steps[i]))
      joinAfter = -1;
    for (StringAttr name : buffersOf(*steps[i]))
      if (lastUse[name] == i)
        freeAt[joinAfter >= 0 ? joinAfter : i].push_back(name);
  }
  return freeAt;
}

/// Renames the buffer of every view in `step`'s arguments through `renamed`.
void renameViews(Operation &step, const DenseMap<StringAttr, StringAttr> &renamed) {
  auto args = step.getAttrOfType<ArrayAttr>("args");
  if (!args)
    return;
  SmallVector<Attribute> updated;
  for (Attribute a : args) {
    if (auto view = dyn_cast<ViewAttr>(a))
      a = ViewAttr::get(a.getContext(), FlatSymbolRefAttr::get(renamed.at(view.getBuffer().getAttr())),
                        view.getColumn(), view.getWidth());
    updated.push_back(a);
  }
  step.setAttr("args", ArrayAttr::get(step.getContext(), updated));
}

struct PlanReuseBuffersPass
    : public mlir::cohere2c::plan::impl::PlanReuseBuffersBase<PlanReuseBuffersPass> {
  void runOnOperation() override {
    for (StepOp step : getOperation().getOps<StepOp>())
      reuse(step);
  }

  void reuse(StepOp step) {
    DenseMap<StringAttr, BufferOp> declared;
    SmallVector<Operation *> steps;
    for (Operation &op : step.getBody().front()) {
      if (auto buffer = dyn_cast<BufferOp>(op))
        declared[buffer.getSymNameAttr()] = buffer;
      else
        steps.push_back(&op);
    }
    std::vector<SmallVector<StringAttr>> freeAt = freePoints(steps);
    using Shape = std::tuple<int64_t, void *, int>;
    auto shapeOf = [](BufferOp b) {
      return Shape{(int64_t)b.getWidth(), const_cast<void *>(b.getDtype().getAsOpaquePointer()),
                   (int)b.getRows().getParam()};
    };
    std::map<Shape, SmallVector<StringAttr>> free;
    DenseMap<StringAttr, StringAttr> renamed; // a buffer -> the one it shares
    DenseSet<StringAttr> kept;
    for (auto [i, op] : llvm::enumerate(steps)) {
      for (StringAttr name : buffersOf(*op)) {
        if (renamed.count(name))
          continue;
        SmallVector<StringAttr> &pool = free[shapeOf(declared.at(name))];
        renamed[name] = pool.empty() ? name : pool.pop_back_val();
        kept.insert(renamed[name]);
      }
      for (StringAttr name : freeAt[i])
        free[shapeOf(declared.at(name))].push_back(renamed[name]);
      renameViews(*op, renamed);
    }
    // Keep the shared buffers, renamed in order; drop the others.
    int64_t count = 0;
    DenseMap<StringAttr, StringAttr> numbered;
    for (Operation &op : llvm::make_early_inc_range(step.getBody().front())) {
      auto buffer = dyn_cast<BufferOp>(op);
      if (!buffer)
        continue;
      if (!kept.contains(buffer.getSymNameAttr())) {
        buffer.erase();
        continue;
      }
      StringAttr name = StringAttr::get(&getContext(), "b" + std::to_string(count++));
      numbered[buffer.getSymNameAttr()] = name;
      buffer.setSymNameAttr(name);
    }
    for (Operation *op : steps)
      renameViews(*op, numbered);
  }
};

} // namespace
