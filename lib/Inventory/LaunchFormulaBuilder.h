//===- LaunchFormulaBuilder.h - A launch site's config_formula from the AST -===//
//
// Part of kloop extract: the formulas of kloop/Inventory/LaunchFormula.h for
// one `<<<>>>` launch, built from clang's AST of the host code around it.
//
//===----------------------------------------------------------------------===//
#ifndef KLOOP_LIB_INVENTORY_LAUNCHFORMULABUILDER_H
#define KLOOP_LIB_INVENTORY_LAUNCHFORMULABUILDER_H

#include "kloop/Inventory/LaunchFormula.h"

namespace clang {
class ASTContext;
class Expr;
class CUDAKernelCallExpr;
class FunctionDecl;
} // namespace clang

namespace kloop {

/// The configuration of \p Call, written in \p Enclosing (null at namespace
/// scope), as formulas over the host variables it passes the kernel. What
/// cannot be expressed (a floating-point step, a call to a function with a
/// loop or several returns, code that depends on a template parameter, a
/// variable changed in a way kloop does not follow) makes the result's
/// Unknown name it; the arguments are listed either way.
inv::LaunchFormula launchFormula(const clang::CUDAKernelCallExpr *Call, const clang::FunctionDecl *Enclosing,
                                 clang::ASTContext &Ctx);

/// \p E without the wrappers a dim3 argument comes in: implicit nodes,
/// parentheses, temporaries, functional casts and copy or move constructions.
const clang::Expr *stripDim3(const clang::Expr *E);

} // namespace kloop

#endif
