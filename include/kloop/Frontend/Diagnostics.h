//===- kloop/Frontend/Diagnostics.h - clang diagnostics as kloop values ----===//
///
/// \file
/// One conversion of a clang diagnostic into a ParseDiagnostic, shared by the
/// parse's own diagnostic consumer (lib/Frontend) and the inventory's error
/// recorder (lib/Inventory).
///
//===----------------------------------------------------------------------===//
#ifndef KLOOP_FRONTEND_DIAGNOSTICS_H
#define KLOOP_FRONTEND_DIAGNOSTICS_H

#include "kloop/Frontend/Frontend.h"
#include "clang/Basic/Diagnostic.h"

namespace kloop {

/// \p Info as a ParseDiagnostic: level "fatal", "error" or "warning" (any other
/// level is written "warning"), the formatted message, and the presumed
/// (#line-aware) file, line and column of its location; File stays empty for
/// a diagnostic without a location.
ParseDiagnostic toParseDiagnostic(clang::DiagnosticsEngine::Level Level, const clang::Diagnostic &Info);

} // namespace kloop

#endif
