//===- Interpreter.h - Renders a parsed chat template
//----------------------===//
//
// Walks the tree of Ast.h as jinja2's generated Python code would run it,
// with transformers' environment: statements in Interpreter.cpp,
// expressions in Evaluate.cpp.
//
// One Interpreter renders once, on one thread; the tree it walks is shared
// and never modified. Bounds that jinja2 does not have keep any input from
// crashing or hanging the process: the output and every string are capped
// at kMaxStringBytes, macro calls nest at most kMaxMacroDepth deep (Python
// would hit its recursion limit), and a render runs at most kMaxSteps
// statements, expressions and loop iterations (a few seconds; Command R7B's
// template takes about 20 steps per message).
//
//===----------------------------------------------------------------------===//
#ifndef COHERE2C_TEXT_CHAT_TEMPLATE_INTERPRETER_H
#define COHERE2C_TEXT_CHAT_TEMPLATE_INTERPRETER_H

#include "text/chat_template/Args.h"
#include "text/chat_template/Ast.h"
#include "text/chat_template/Scope.h"
#include "text/chat_template/Value.h"

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace cohere2c::text::jinja {

inline constexpr unsigned kMaxMacroDepth = 100;
inline constexpr uint64_t kMaxSteps = uint64_t(1) << 26;

class Interpreter {
public:
  /// `globals` is the outermost scope: the environment's globals and the
  /// render's variables.
  explicit Interpreter(std::shared_ptr<Scope> globals);
  /// Empties the namespaces and loops the render made, which may refer to
  /// each other or to themselves ({% set ns.self = ns %}), so that no cycle
  /// of shared pointers outlives the render.
  ~Interpreter();
  Interpreter(const Interpreter &) = delete;
  Interpreter &operator=(const Interpreter &) = delete;

  /// Renders the whole template. Throws TemplateError or RaisedError.
  std::string render(const TemplateAst &ast);

  /// The value of `expr` in the current scope; errors carry the location of
  /// the innermost expression that failed.
  Value evaluate(const Expr &expr);

  /// Runs `body` in `scope` and returns what it printed (a macro's body, a
  /// {% set %} block). Fails beyond kMaxMacroDepth nested captures.
  std::string capture(const Body &body, std::shared_ptr<Scope> scope);

  /// Keeps `scope` alive until the render ends. A macro refers to the scope
  /// it was defined in without owning it, since that scope owns the macro.
  void retain(std::shared_ptr<Scope> scope);
  /// Registers a namespace or loop to be emptied when the render ends.
  void track(std::shared_ptr<Namespace> ns);
  void track(std::shared_ptr<LoopContext> loop);

  /// Makes `scope` current until destroyed.
  class ScopeSwap {
  public:
    ScopeSwap(Interpreter &interpreter, std::shared_ptr<Scope> scope)
        : interpreter_(interpreter), saved_(std::move(interpreter.scope_)) {
      interpreter_.scope_ = std::move(scope);
    }
    ~ScopeSwap() { interpreter_.scope_ = std::move(saved_); }

  private:
    Interpreter &interpreter_;
    std::shared_ptr<Scope> saved_;
  };

private:
  enum class Flow { Normal, Break, Continue };

  // Statements (Interpreter.cpp).
  Flow execute(const Body &body);
  Flow executeStmt(const Stmt &stmt);
  Flow executeIf(const IfStmt &stmt);
  void executeFor(const ForStmt &stmt);
  void executeSetBlock(const SetBlockStmt &stmt);
  void executeScope(const ScopeStmt &stmt);
  /// Binds `target` in the current scope (a name, names unpacked from a
  /// sequence, or a namespace attribute).
  void assign(const Target &target, const Value &value);
  void emit(std::string_view text);
  void countStep();

  // Expressions (Evaluate.cpp).
  Value evaluateUnlocated(const Expr &expr);
  Value evaluateName(const NameExpr &expr);
  Value evaluateCollection(const CollectionExpr &expr);
  Value evaluateSlice(const SliceExpr &expr);
  Value evaluateCall(const CallExpr &expr);
  /// A filter or test; `blockInput` replaces a missing innermost input
  /// (the text of a {% filter %} or {% set %} block).
  Value evaluateFilter(const FilterExpr &expr, const Value *blockInput);
  Value evaluateUnary(const UnaryExpr &expr);
  Value evaluateBinary(const BinaryExpr &expr);
  Value evaluateConcat(const ConcatExpr &expr);
  Value evaluateCompare(const CompareExpr &expr);
  Value evaluateConditional(const ConditionalExpr &expr);
  CallArgs evaluateArgs(const Arguments &args);

  std::shared_ptr<Scope> scope_;
  std::vector<std::shared_ptr<Scope>> retained_;
  std::vector<std::shared_ptr<Namespace>> namespaces_;
  std::vector<std::shared_ptr<LoopContext>> loops_;
  std::string *out_ = nullptr;
  unsigned captureDepth_ = 0;
  uint64_t steps_ = 0;
};

} // namespace cohere2c::text::jinja

#endif // COHERE2C_TEXT_CHAT_TEMPLATE_INTERPRETER_H
