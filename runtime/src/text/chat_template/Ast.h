//===- Ast.h - The parsed form of a chat template -------------------------===//
//
// Expressions and statements of the Jinja2 subset, as jinja2's parser builds
// them (jinja2/nodes.py), each with the line and column it starts at. The
// tree is immutable once parsed and shared by every render.
//
//===----------------------------------------------------------------------===//
#ifndef COHERE2C_TEXT_CHAT_TEMPLATE_AST_H
#define COHERE2C_TEXT_CHAT_TEMPLATE_AST_H

#include "text/chat_template/Error.h"
#include "text/chat_template/Operators.h"
#include "text/chat_template/Value.h"

#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace cohere2c::text::jinja {

struct Expr {
  enum class Kind {
    Literal,
    Name,
    List,
    Tuple,
    Dict,
    Attribute,
    Item,
    Slice,
    Call,
    Filter,
    Test,
    Unary,
    Binary,
    And,
    Or,
    Concat,
    Compare,
    Conditional,
  };
  Expr(Kind kind, SourceLoc loc) : kind(kind), loc(loc) {}
  virtual ~Expr() = default;
  const Kind kind;
  const SourceLoc loc;
};
using ExprPtr = std::unique_ptr<Expr>;

/// The arguments of a call, a filter or a test: f(a, b, k=v, *args,
/// **kwargs).
struct Arguments {
  std::vector<ExprPtr> positional;
  std::vector<std::pair<std::string, ExprPtr>> keyword;
  ExprPtr starArgs;
  ExprPtr starKwargs;
};

struct LiteralExpr : Expr {
  LiteralExpr(SourceLoc loc, Value value)
      : Expr(Kind::Literal, loc), value(std::move(value)) {}
  Value value;
};

struct NameExpr : Expr {
  NameExpr(SourceLoc loc, std::string name)
      : Expr(Kind::Name, loc), name(std::move(name)) {}
  std::string name;
};

/// A list, tuple or dict display; a dict's items alternate key, value.
struct CollectionExpr : Expr {
  CollectionExpr(Kind kind, SourceLoc loc) : Expr(kind, loc) {}
  std::vector<ExprPtr> items;
};

/// obj.name
struct AttributeExpr : Expr {
  AttributeExpr(SourceLoc loc, ExprPtr object, std::string name)
      : Expr(Kind::Attribute, loc), object(std::move(object)),
        name(std::move(name)) {}
  ExprPtr object;
  std::string name;
};

/// obj[index]
struct ItemExpr : Expr {
  ItemExpr(SourceLoc loc, ExprPtr object, ExprPtr index)
      : Expr(Kind::Item, loc), object(std::move(object)),
        index(std::move(index)) {}
  ExprPtr object;
  ExprPtr index;
};

/// obj[start:stop:step]; a part left out is null.
struct SliceExpr : Expr {
  SliceExpr(SourceLoc loc) : Expr(Kind::Slice, loc) {}
  ExprPtr object;
  ExprPtr start;
  ExprPtr stop;
  ExprPtr step;
};

struct CallExpr : Expr {
  CallExpr(SourceLoc loc, ExprPtr callee)
      : Expr(Kind::Call, loc), callee(std::move(callee)) {}
  ExprPtr callee;
  Arguments args;
};

/// input | name(args), or input is name(args); the input of a filter is
/// null in {% filter %} blocks and {% set x | f %}.
struct FilterExpr : Expr {
  FilterExpr(Kind kind, SourceLoc loc, ExprPtr input, std::string name)
      : Expr(kind, loc), input(std::move(input)), name(std::move(name)) {}
  ExprPtr input;
  std::string name;
  Arguments args;
};

struct UnaryExpr : Expr {
  enum class Op { Neg, Pos, Not };
  UnaryExpr(SourceLoc loc, Op op, ExprPtr operand)
      : Expr(Kind::Unary, loc), op(op), operand(std::move(operand)) {}
  Op op;
  ExprPtr operand;
};

/// Arithmetic (kind Binary), or the short-circuit `and` / `or` (kinds And,
/// Or, which return an operand as Python does).
struct BinaryExpr : Expr {
  BinaryExpr(Kind kind, SourceLoc loc, BinaryOp op, ExprPtr lhs, ExprPtr rhs)
      : Expr(kind, loc), op(op), lhs(std::move(lhs)), rhs(std::move(rhs)) {}
  BinaryOp op;
  ExprPtr lhs;
  ExprPtr rhs;
};

/// a ~ b ~ c: str() of each, joined.
struct ConcatExpr : Expr {
  ConcatExpr(SourceLoc loc) : Expr(Kind::Concat, loc) {}
  std::vector<ExprPtr> parts;
};

/// a < b <= c: chained as in Python.
struct CompareExpr : Expr {
  CompareExpr(SourceLoc loc, ExprPtr first)
      : Expr(Kind::Compare, loc), first(std::move(first)) {}
  ExprPtr first;
  std::vector<std::pair<CompareOp, ExprPtr>> rest;
};

/// then if test else otherwise; `otherwise` may be null (Undefined).
struct ConditionalExpr : Expr {
  ConditionalExpr(SourceLoc loc) : Expr(Kind::Conditional, loc) {}
  ExprPtr test;
  ExprPtr then;
  ExprPtr otherwise;
};

/// What set, for and with assign to: a name, names to unpack (a, b), or a
/// namespace attribute (ns.attr).
struct Target {
  enum class Kind { Name, Unpack, NamespaceAttr };
  Kind kind = Kind::Name;
  std::vector<std::string> names;
  std::string attribute;
  SourceLoc loc;
};

struct Stmt;
using StmtPtr = std::unique_ptr<Stmt>;
using Body = std::vector<StmtPtr>;

struct Stmt {
  enum class Kind {
    Text,
    Output,
    If,
    For,
    Set,
    SetBlock,
    Macro,
    FilterBlock,
    Scope,
    Break,
    Continue,
  };
  Stmt(Kind kind, SourceLoc loc) : kind(kind), loc(loc) {}
  virtual ~Stmt() = default;
  const Kind kind;
  const SourceLoc loc;
};

struct TextStmt : Stmt {
  TextStmt(SourceLoc loc, std::string text)
      : Stmt(Kind::Text, loc), text(std::move(text)) {}
  std::string text;
};

/// {{ expr }} and {% print expr %}.
struct OutputStmt : Stmt {
  OutputStmt(SourceLoc loc, ExprPtr expr)
      : Stmt(Kind::Output, loc), expr(std::move(expr)) {}
  ExprPtr expr;
};

struct IfStmt : Stmt {
  IfStmt(SourceLoc loc) : Stmt(Kind::If, loc) {}
  /// if and elif branches in order.
  std::vector<std::pair<ExprPtr, Body>> branches;
  Body otherwise;
};

struct ForStmt : Stmt {
  ForStmt(SourceLoc loc) : Stmt(Kind::For, loc) {}
  Target target;
  ExprPtr iterable;
  /// {% for x in xs if cond %}; null without.
  ExprPtr filter;
  Body body;
  /// {% else %}: runs when the loop ran no iteration.
  Body otherwise;
};

struct SetStmt : Stmt {
  SetStmt(SourceLoc loc) : Stmt(Kind::Set, loc) {}
  Target target;
  ExprPtr value;
};

/// {% set x %}...{% endset %}, optionally {% set x | filter %}.
struct SetBlockStmt : Stmt {
  SetBlockStmt(SourceLoc loc) : Stmt(Kind::SetBlock, loc) {}
  Target target;
  /// Filters applied to the captured text, innermost first; may be null.
  ExprPtr filter;
  Body body;
};

struct MacroStmt : Stmt {
  MacroStmt(SourceLoc loc) : Stmt(Kind::Macro, loc) {}
  std::string name;
  std::vector<std::string> params;
  /// Defaults of the last defaults.size() params.
  std::vector<ExprPtr> defaults;
  Body body;
  /// Whether the body mentions varargs / kwargs: jinja2 then accepts extra
  /// positional / keyword arguments into them.
  bool catchesVarargs = false;
  bool catchesKwargs = false;
};

/// {% filter f %}...{% endfilter %}
struct FilterBlockStmt : Stmt {
  FilterBlockStmt(SourceLoc loc) : Stmt(Kind::FilterBlock, loc) {}
  ExprPtr filter;
  Body body;
};

/// A body run in a scope of its own: {% with a = 1 %} and {% generation %}
/// (transformers' AssistantTracker renders its body as a call block).
struct ScopeStmt : Stmt {
  ScopeStmt(SourceLoc loc) : Stmt(Kind::Scope, loc) {}
  std::vector<std::pair<Target, ExprPtr>> assignments;
  Body body;
};

struct LoopControlStmt : Stmt {
  LoopControlStmt(Kind kind, SourceLoc loc) : Stmt(kind, loc) {}
};

struct TemplateAst {
  Body body;
};

/// Whether `body` refers to the variable `name` anywhere, macros nested in
/// it included: jinja2 gives a macro `varargs` and `kwargs` only when its
/// body refers to them.
bool mentionsName(const Body &body, std::string_view name);

} // namespace cohere2c::text::jinja

#endif // COHERE2C_TEXT_CHAT_TEMPLATE_AST_H
