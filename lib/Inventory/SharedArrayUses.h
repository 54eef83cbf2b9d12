//===- SharedArrayUses.h - How a kernel uses a __shared__ array -*- C++ -*-===//
//
// Private to kloopInventory. The facts a rewrite of a shared array's shape
// needs (docs/inventory.md, "shared_array"; docs/rules/pad-shared-tiles.md):
// whether its declaration is a statement of its own in the kernel body, whether
// any use sees it as memory rather than as elements (a pointer cast, a call
// argument, sizeof, an element's address), and whether an access walks a
// column (threadIdx.x in an index other than the last).
//
//===----------------------------------------------------------------------===//
#ifndef KLOOP_LIB_INVENTORY_SHAREDARRAYUSES_H
#define KLOOP_LIB_INVENTORY_SHAREDARRAYUSES_H

#include "clang/AST/ASTContext.h"
#include "clang/AST/Decl.h"
#include "nlohmann/json.hpp"

namespace kloop {

/// Facts about shared array \p V declared in kernel \p Kernel, as inventory fields:
/// - "stmt": the 1-based index of its declaration among the direct statements of
///   the kernel body when that statement declares \p V alone, else null;
/// - "decl_text": that statement's text, `;` included (null with "stmt");
/// - "escapes": null, or the first use that sees the array as memory rather than
///   through a subscript of every dimension, with its line ("cast to a pointer
///   at line 12", "passed to 'f' at line 9", "its size is taken (sizeof) at
///   line 4", "an element's address is taken at line 7", "used with fewer
///   subscripts than dimensions at line 3");
/// - "column_access": null, or the first full subscript whose index into a
///   dimension other than the last uses threadIdx.x while the last does not
///   ("tile[threadIdx.x][k] at line 14"): the consecutive threads of a warp
///   then read one column, a row length apart.
nlohmann::json sharedArrayUses(const clang::VarDecl *V, const clang::FunctionDecl *Kernel, clang::ASTContext &Ctx);

} // namespace kloop

#endif
