//===- Interpreter.cpp - Statements of a chat template
//---------------------===//
#include "text/chat_template/Interpreter.h"

#include "text/chat_template/Error.h"
#include "text/chat_template/Loop.h"
#include "text/chat_template/Macro.h"
#include "text/chat_template/Operators.h"

#include <optional>

namespace cohere2c::text::jinja {

Interpreter::Interpreter(std::shared_ptr<Scope> globals)
    : scope_(std::move(globals)) {}

Interpreter::~Interpreter() {
  for (const std::shared_ptr<Namespace> &ns : namespaces_)
    ns->attributes = Dict();
  for (const std::shared_ptr<LoopContext> &loop : loops_)
    loop->release();
}

void Interpreter::retain(std::shared_ptr<Scope> scope) {
  retained_.push_back(std::move(scope));
}

void Interpreter::track(std::shared_ptr<Namespace> ns) {
  namespaces_.push_back(std::move(ns));
}

void Interpreter::track(std::shared_ptr<LoopContext> loop) {
  loops_.push_back(std::move(loop));
}

std::string Interpreter::render(const TemplateAst &ast) {
  std::string out;
  out_ = &out;
  execute(ast.body);
  out_ = nullptr;
  return out;
}

std::string Interpreter::capture(const Body &body,
                                 std::shared_ptr<Scope> scope) {
  if (captureDepth_ >= kMaxMacroDepth)
    throw TemplateError("maximum recursion depth exceeded (macro calls and "
                        "blocks nest deeper than " +
                        std::to_string(kMaxMacroDepth) + ")");
  std::string text;
  std::string *saved = out_;
  out_ = &text;
  ++captureDepth_;
  ScopeSwap swap(*this, std::move(scope));
  try {
    execute(body);
  } catch (...) {
    --captureDepth_;
    out_ = saved;
    throw;
  }
  --captureDepth_;
  out_ = saved;
  return text;
}

void Interpreter::emit(std::string_view text) {
  checkStringSize(out_->size() + text.size());
  out_->append(text);
}

void Interpreter::countStep() {
  if (++steps_ > kMaxSteps)
    throw TemplateError("the template ran more than " +
                        std::to_string(kMaxSteps) +
                        " steps (is it looping without end?)");
}

Interpreter::Flow Interpreter::execute(const Body &body) {
  for (const StmtPtr &stmt : body) {
    Flow flow = executeStmt(*stmt);
    if (flow != Flow::Normal)
      return flow;
  }
  return Flow::Normal;
}

Interpreter::Flow Interpreter::executeStmt(const Stmt &stmt) {
  countStep();
  try {
    switch (stmt.kind) {
    case Stmt::Kind::Text:
      emit(static_cast<const TextStmt &>(stmt).text);
      break;
    case Stmt::Kind::Output:
      emit(toStr(evaluate(*static_cast<const OutputStmt &>(stmt).expr)));
      break;
    case Stmt::Kind::If:
      return executeIf(static_cast<const IfStmt &>(stmt));
    case Stmt::Kind::For:
      executeFor(static_cast<const ForStmt &>(stmt));
      break;
    case Stmt::Kind::Set: {
      auto &set = static_cast<const SetStmt &>(stmt);
      assign(set.target, evaluate(*set.value));
      break;
    }
    case Stmt::Kind::SetBlock:
      executeSetBlock(static_cast<const SetBlockStmt &>(stmt));
      break;
    case Stmt::Kind::Macro: {
      auto &macro = static_cast<const MacroStmt &>(stmt);
      retain(scope_);
      scope_->set(macro.name, makeMacro(macro, scope_));
      break;
    }
    case Stmt::Kind::FilterBlock: {
      auto &block = static_cast<const FilterBlockStmt &>(stmt);
      Value text =
          Value::string(capture(block.body, std::make_shared<Scope>(scope_)));
      emit(toStr(evaluateFilter(static_cast<const FilterExpr &>(*block.filter),
                                &text)));
      break;
    }
    case Stmt::Kind::Scope:
      executeScope(static_cast<const ScopeStmt &>(stmt));
      break;
    case Stmt::Kind::Break:
      return Flow::Break;
    case Stmt::Kind::Continue:
      return Flow::Continue;
    }
  } catch (TemplateError &error) {
    error.locate(stmt.loc);
    throw;
  }
  return Flow::Normal;
}

Interpreter::Flow Interpreter::executeIf(const IfStmt &stmt) {
  for (const auto &[test, body] : stmt.branches)
    if (truthy(evaluate(*test)))
      return execute(body);
  return execute(stmt.otherwise);
}

// jinja2's for loop: the `if` filter runs lazily in a scope of its own that
// sees the target; each iteration gets a fresh scope with the target and
// `loop`; `else` runs when no iteration ran.
void Interpreter::executeFor(const ForStmt &stmt) {
  Value iterable = evaluate(*stmt.iterable);
  std::shared_ptr<Scope> outer = scope_;
  LoopContext::Source source =
      [this, &stmt, outer, items = iterate(iterable),
       next = size_t(0)]() mutable -> std::optional<Value> {
    while (next < items.size()) {
      Value item = items[next++];
      if (!stmt.filter)
        return item;
      ScopeSwap swap(*this, std::make_shared<Scope>(outer));
      assign(stmt.target, item);
      if (truthy(evaluate(*stmt.filter)))
        return item;
    }
    return std::nullopt;
  };
  auto loop = std::make_shared<LoopContext>(std::move(source));
  track(loop);
  Value loopValue = Value::loop(loop);
  bool iterated = false;
  std::shared_ptr<Scope> inner;
  for (Value item; loop->advance(item);) {
    countStep();
    iterated = true;
    // A scope nothing kept (no macro defined in the body) is reused.
    if (inner && inner.use_count() == 1)
      inner->clear();
    else
      inner = std::make_shared<Scope>(outer);
    ScopeSwap swap(*this, inner);
    assign(stmt.target, item);
    scope_->set("loop", loopValue);
    if (execute(stmt.body) == Flow::Break)
      break;
  }
  if (!iterated && !stmt.otherwise.empty()) {
    ScopeSwap swap(*this, std::make_shared<Scope>(outer));
    execute(stmt.otherwise);
  }
}

void Interpreter::executeSetBlock(const SetBlockStmt &stmt) {
  Value text =
      Value::string(capture(stmt.body, std::make_shared<Scope>(scope_)));
  if (stmt.filter)
    text = evaluateFilter(static_cast<const FilterExpr &>(*stmt.filter), &text);
  assign(stmt.target, text);
}

// {% with %}: the values are evaluated in the outer scope, then bound in
// the inner one. {% generation %} is a with-block without assignments.
void Interpreter::executeScope(const ScopeStmt &stmt) {
  auto inner = std::make_shared<Scope>(scope_);
  std::vector<Value> values;
  for (const auto &[target, value] : stmt.assignments)
    values.push_back(evaluate(*value));
  ScopeSwap swap(*this, inner);
  for (size_t i = 0; i < values.size(); ++i)
    assign(stmt.assignments[i].first, values[i]);
  execute(stmt.body);
}

void Interpreter::assign(const Target &target, const Value &value) {
  switch (target.kind) {
  case Target::Kind::Name:
    scope_->set(target.names[0], value);
    return;
  case Target::Kind::NamespaceAttr: {
    const Value *ns = scope_->find(target.names[0]);
    if (!ns || ns->kind() != Value::Kind::Namespace)
      throw TemplateError("Cannot assign attribute on non-namespace object",
                          target.loc);
    ns->asNamespace().attributes.set(Value::string(target.attribute), value);
    return;
  }
  case Target::Kind::Unpack:
    break;
  }
  std::vector<Value> items = iterate(value);
  size_t wanted = target.names.size();
  if (items.size() < wanted)
    throw TemplateError("not enough values to unpack (expected " +
                            std::to_string(wanted) + ", got " +
                            std::to_string(items.size()) + ")",
                        target.loc);
  if (items.size() > wanted)
    throw TemplateError("too many values to unpack (expected " +
                            std::to_string(wanted) + ")",
                        target.loc);
  for (size_t i = 0; i < wanted; ++i)
    scope_->set(target.names[i], items[i]);
}

} // namespace cohere2c::text::jinja
