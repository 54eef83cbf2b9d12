//===- IndirectPointers.h - Memory a kernel reaches past its parameters -*- C++ -*-===//
//
// Private to kloopInventory. The fact add_restrict and privatize-atomics need
// (docs/inventory.md, "indirect_pointer"): whether a kernel, or a function it
// calls, reaches device memory through something other than its own pointer
// parameters, which no launch site shows and so no alias check can follow.
//
//===----------------------------------------------------------------------===//
#ifndef KLOOP_LIB_INVENTORY_INDIRECTPOINTERS_H
#define KLOOP_LIB_INVENTORY_INDIRECTPOINTERS_H

#include "clang/AST/ASTContext.h"
#include "clang/AST/Decl.h"
#include "nlohmann/json.hpp"

namespace kloop {

/// The inventory's "indirect_pointer" member of kernel \p Kernel: null when every pointer its body and the
/// functions it calls (transitively, outside system headers) dereference derives from a parameter or a
/// local variable; else the first other way in, as "`o.p` (k.cu:8, in 'bump'): a pointer read from
/// memory". The ways: a pointer read from memory (a struct member, an element of a pointer table, a
/// global, a local written through its address or by inline asm), a pointer made from an integer or by
/// a bit cast, a call through a function pointer, a virtual call, a call of a project function defined
/// in another unit, inline asm that may write memory, and a `__device__` variable named outright (its
/// address may reach the kernel as an argument, through cudaGetSymbolAddress); destructors and default
/// arguments are read with the code that runs them (docs/inventory.md lists them). A template kernel is
/// read in every instantiation the translation unit makes (as written when it makes none).
nlohmann::json indirectPointer(const clang::FunctionDecl *Kernel, clang::ASTContext &Ctx);

} // namespace kloop

#endif
