//===- AssignStreams.cpp - plan-assign-streams ----------------------------===//
//
// Stream planning of a step: each layer's MLP branch runs on the side stream
// while the main stream runs the attention chain of the same layer (Cohere2's
// parallel block: both read the same layer norm, and only the residual sum
// reads both). At one token the attention chain (KV append, split
// attention, merge, o projection) is a run of small dependent kernels that
// leave most of the memory bandwidth idle, which the MLP's down projection
// can use. Dataflow comes from what each step reads and writes: a GEMM
// writes its output c, a kernel the arguments its spec names
// (KernelSpec.h, outputArguments).
//
//===----------------------------------------------------------------------===//

#include "cohere2c/Dialect/Plan/IR/Plan.h"
#include "cohere2c/Dialect/Plan/Transforms/Passes.h"

#include "mlir/IR/Builders.h"

#include <optional>

namespace mlir::cohere2c::plan {
#define GEN_PASS_DEF_PLANASSIGNSTREAMS
#include "cohere2c/Dialect/Plan/Transforms/Passes.h.inc"
} // namespace mlir::cohere2c::plan

using namespace mlir;
using namespace mlir::cohere2c::plan;

namespace {

/// Memory a step names: columns [begin, end) of a buffer's rows, or a step
/// input (a KV pool, the logits) as a whole.
struct Place {
  Attribute name; // the buffer's StringAttr, or the InputAttr
  int64_t begin = 0, end = 0;
  bool overlaps(const Place &o) const {
    return name == o.name && begin < o.end && o.begin < end;
  }
};

/// What one step reads and writes.
struct Access {
  SmallVector<Place> reads, writes;
};

class Dataflow {
public:
  explicit Dataflow(StepOp step) {
    for (Operation &op : step.getBody().front())
      if (auto buffer = dyn_cast<BufferOp>(op))
        widths[buffer.getSymNameAttr()] = buffer.getWidth();
    for (Operation &op : step.getBody().front())
      if (isa<LaunchOp, GemmOp>(op)) {
        steps.push_back(&op);
        access.push_back(accessOf(op));
      }
  }

  /// The position of the last step before `at` that writes any of `places`
  /// (-1: none).
  int64_t readyAt(ArrayRef<Place> places, int64_t at) const {
    for (int64_t i = at - 1; i >= 0; --i)
      for (const Place &w : access[i].writes)
        for (const Place &p : places)
          if (w.overlaps(p))
            return i;
    return -1;
  }

  std::vector<Operation *> steps;
  std::vector<Access> access;

private:
  std::optional<Place> placeOf(Attribute a) const {
    if (auto view = dyn_cast<ViewAttr>(a)) {
      StringAttr name = view.getBuffer().getAttr();
      int64_t end = view.getWidth() ? view.getColumn() + view.getWidth() : widths.lookup(name);
      return Place{name, view.getColumn(), end};
    }
    if (isa<InputAttr>(a))
      return Place{a, 0, 1};
    return std::nullopt; // weights, parameters, constants: read-only, or no memory
  }

  Access accessOf(Operation &op) const {
    ArrayAttr args = op.getAttrOfType<ArrayAttr>("args");
    std::vector<int> outputs = {1}; // a GEMM's c
    if (auto launch = dyn_cast<LaunchOp>(op))
      outputs = ::cohere2c::outputArguments(launch.getSpec().getSpec(), args.size());
    Access result;
    for (int i = 0; i < (int)args.size(); ++i)
      if (std::optional<Place> p = placeOf(args[i]))
        (llvm::is_contained(outputs, i) ? result.writes : result.reads).push_back(*p);
    return result;
  }

  DenseMap<StringAttr, int64_t> widths;
};

/// The kernel family of a launch; none for a GEMM.
std::optional<::cohere2c::KernelFamily> familyOf(Operation *op) {
  if (auto launch = dyn_cast<LaunchOp>(op))
    return launch.getSpec().getSpec().family;
  return std::nullopt;
}

bool isSwiGLU(Operation *op) {
  auto family = familyOf(op);
  return family == ::cohere2c::KernelFamily::SwiGLU ||
         family == ::cohere2c::KernelFamily::SwiGLUQuantFP8;
}

/// A linear layer's step: its GEMM, or the matrix-vector kernel of one token.
bool isLinear(Operation *op) {
  auto family = familyOf(op);
  return !family || family == ::cohere2c::KernelFamily::Gemv ||
         family == ::cohere2c::KernelFamily::GemvFP8;
}

/// A side branch: the steps on the side stream, after the fork that follows
/// step `fork` and before the join that precedes step `join`.
struct Branch {
  int64_t fork = -1, join = -1;
  SmallVector<int64_t> steps;
};

/// The branch from the SwiGLU at `start` on: the SwiGLUs and linear layers
/// that read or overwrite the branch and otherwise read only what was ready
/// at the fork (the SwiGLU's one-token variant, the down projection); the
/// fork follows the last step writing the SwiGLU's inputs, the join precedes
/// the first other step that reads or overwrites the branch (the residual
/// sum). None if it would reach the end of the step.
std::optional<Branch> branchFrom(const Dataflow &flow, int64_t start) {
  Branch branch;
  branch.fork = flow.readyAt(flow.access[start].reads, start);
  branch.steps.push_back(start);
  SmallVector<Place> values(flow.access[start].writes);
  auto inBranch = [&](const Place &p) {
    return llvm::any_of(values, [&](const Place &v) { return v.overlaps(p); });
  };
  for (int64_t i = start + 1; i < (int64_t)flow.steps.size(); ++i) {
    const Access &a = flow.access[i];
    if (!llvm::any_of(a.reads, inBranch) && !llvm::any_of(a.writes, inBranch))
      continue;
    bool joins = (isLinear(flow.steps[i]) || isSwiGLU(flow.steps[i])) &&
                 llvm::all_of(a.reads, [&](const Place &p) {
                   return inBranch(p) || flow.readyAt({p}, i) <= branch.fork;
                 });
    if (!joins) {
      branch.join = i;
      return branch;
    }
    branch.steps.push_back(i);
    values.append(a.writes.begin(), a.writes.end());
  }
  return std::nullopt;
}

struct AssignStreams
    : public mlir::cohere2c::plan::impl::PlanAssignStreamsBase<AssignStreams> {
  void runOnOperation() override {
    getOperation().walk([&](StepOp step) {
      if (llvm::any_of(step.getBody().front(),
                       [](Operation &op) { return isa<ForkOp, JoinOp>(op); }))
        return; // planned already
      assign(step);
    });
  }

  void assign(StepOp step) {
    Dataflow flow(step);
    std::vector<Branch> branches;
    int64_t lastJoin = -1;
    for (int64_t i = 0; i < (int64_t)flow.steps.size(); ++i) {
      if (!isSwiGLU(flow.steps[i]))
        continue;
      std::optional<Branch> branch = branchFrom(flow, i);
      // A branch that would start before the previous one joined stays on
      // the main stream.
      if (!branch || branch->fork < 0 || branch->fork <= lastJoin)
        continue;
      lastJoin = branch->join;
      branches.push_back(std::move(*branch));
    }
    OpBuilder b(step.getContext());
    for (const Branch &branch : branches) {
      for (int64_t s : branch.steps)
        flow.steps[s]->setAttr("side", b.getUnitAttr());
      b.setInsertionPointAfter(flow.steps[branch.fork]);
      ForkOp::create(b, step.getLoc());
      b.setInsertionPoint(flow.steps[branch.join]);
      JoinOp::create(b, step.getLoc());
    }
  }
};

} // namespace
