//===- Ast.cpp - The parsed form of a chat template -----------------------===//
#include "text/chat_template/Ast.h"

namespace cohere2c::text::jinja {

namespace {

bool exprMentions(const Expr *expr, std::string_view name);

bool argsMention(const Arguments &args, std::string_view name) {
  for (const ExprPtr &arg : args.positional)
    if (exprMentions(arg.get(), name))
      return true;
  for (const auto &[key, arg] : args.keyword)
    if (exprMentions(arg.get(), name))
      return true;
  return exprMentions(args.starArgs.get(), name) ||
         exprMentions(args.starKwargs.get(), name);
}

bool exprMentions(const Expr *expr, std::string_view name) {
  if (!expr)
    return false;
  switch (expr->kind) {
  case Expr::Kind::Literal:
    return false;
  case Expr::Kind::Name:
    return static_cast<const NameExpr *>(expr)->name == name;
  case Expr::Kind::List:
  case Expr::Kind::Tuple:
  case Expr::Kind::Dict:
    for (const ExprPtr &item : static_cast<const CollectionExpr *>(expr)->items)
      if (exprMentions(item.get(), name))
        return true;
    return false;
  case Expr::Kind::Attribute:
    return exprMentions(static_cast<const AttributeExpr *>(expr)->object.get(),
                        name);
  case Expr::Kind::Item: {
    auto *item = static_cast<const ItemExpr *>(expr);
    return exprMentions(item->object.get(), name) ||
           exprMentions(item->index.get(), name);
  }
  case Expr::Kind::Slice: {
    auto *slice = static_cast<const SliceExpr *>(expr);
    return exprMentions(slice->object.get(), name) ||
           exprMentions(slice->start.get(), name) ||
           exprMentions(slice->stop.get(), name) ||
           exprMentions(slice->step.get(), name);
  }
  case Expr::Kind::Call: {
    auto *call = static_cast<const CallExpr *>(expr);
    return exprMentions(call->callee.get(), name) ||
           argsMention(call->args, name);
  }
  case Expr::Kind::Filter:
  case Expr::Kind::Test: {
    auto *filter = static_cast<const FilterExpr *>(expr);
    return exprMentions(filter->input.get(), name) ||
           argsMention(filter->args, name);
  }
  case Expr::Kind::Unary:
    return exprMentions(static_cast<const UnaryExpr *>(expr)->operand.get(),
                        name);
  case Expr::Kind::Binary:
  case Expr::Kind::And:
  case Expr::Kind::Or: {
    auto *binary = static_cast<const BinaryExpr *>(expr);
    return exprMentions(binary->lhs.get(), name) ||
           exprMentions(binary->rhs.get(), name);
  }
  case Expr::Kind::Concat:
    for (const ExprPtr &part : static_cast<const ConcatExpr *>(expr)->parts)
      if (exprMentions(part.get(), name))
        return true;
    return false;
  case Expr::Kind::Compare: {
    auto *compare = static_cast<const CompareExpr *>(expr);
    if (exprMentions(compare->first.get(), name))
      return true;
    for (const auto &[op, operand] : compare->rest)
      if (exprMentions(operand.get(), name))
        return true;
    return false;
  }
  case Expr::Kind::Conditional: {
    auto *cond = static_cast<const ConditionalExpr *>(expr);
    return exprMentions(cond->test.get(), name) ||
           exprMentions(cond->then.get(), name) ||
           exprMentions(cond->otherwise.get(), name);
  }
  }
  return false;
}

bool stmtMentions(const Stmt &stmt, std::string_view name) {
  switch (stmt.kind) {
  case Stmt::Kind::Output:
    return exprMentions(static_cast<const OutputStmt &>(stmt).expr.get(), name);
  case Stmt::Kind::If: {
    auto &ifStmt = static_cast<const IfStmt &>(stmt);
    for (const auto &[test, body] : ifStmt.branches)
      if (exprMentions(test.get(), name) || mentionsName(body, name))
        return true;
    return mentionsName(ifStmt.otherwise, name);
  }
  case Stmt::Kind::For: {
    auto &forStmt = static_cast<const ForStmt &>(stmt);
    return exprMentions(forStmt.iterable.get(), name) ||
           exprMentions(forStmt.filter.get(), name) ||
           mentionsName(forStmt.body, name) ||
           mentionsName(forStmt.otherwise, name);
  }
  case Stmt::Kind::Set:
    return exprMentions(static_cast<const SetStmt &>(stmt).value.get(), name);
  case Stmt::Kind::SetBlock: {
    auto &block = static_cast<const SetBlockStmt &>(stmt);
    return exprMentions(block.filter.get(), name) ||
           mentionsName(block.body, name);
  }
  case Stmt::Kind::Macro: {
    auto &macro = static_cast<const MacroStmt &>(stmt);
    for (const ExprPtr &value : macro.defaults)
      if (exprMentions(value.get(), name))
        return true;
    return mentionsName(macro.body, name);
  }
  case Stmt::Kind::FilterBlock: {
    auto &block = static_cast<const FilterBlockStmt &>(stmt);
    return exprMentions(block.filter.get(), name) ||
           mentionsName(block.body, name);
  }
  case Stmt::Kind::Scope: {
    auto &scope = static_cast<const ScopeStmt &>(stmt);
    for (const auto &[target, value] : scope.assignments)
      if (exprMentions(value.get(), name))
        return true;
    return mentionsName(scope.body, name);
  }
  default:
    return false;
  }
}

} // namespace

bool mentionsName(const Body &body, std::string_view name) {
  for (const StmtPtr &stmt : body)
    if (stmtMentions(*stmt, name))
      return true;
  return false;
}

} // namespace cohere2c::text::jinja
