//===- Extract.cpp - plan jobs -> recover -> inventory -> merge -----------===//
#include "kloop/Inventory/Extract.h"

#include "llvm/ADT/SmallString.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"

using llvm::Error;
using llvm::Expected;

namespace kloop {

/// \p Root made absolute (the current directory when empty), dots removed.
static std::string absoluteRoot(llvm::StringRef Root) {
  llvm::SmallString<256> R(Root);
  if (R.empty())
    llvm::sys::fs::current_path(R);
  else
    llvm::sys::fs::make_absolute(R);
  llvm::sys::path::remove_dots(R, true);
  return std::string(R);
}

/// Counts the translation units of \p E with status "error" and "partial".
static void countStatus(Extraction &E) {
  for (const inv::TranslationUnit &TU : E.Inventory.TranslationUnits) {
    E.Lost += TU.Status == "error";
    E.Partial += TU.Status == "partial";
  }
}

Expected<Extraction> extractInventory(const FrontendOptions &Inputs, const ExtractOptions &Opts) {
  Extraction E;
  Expected<PlannedJobs> Planned = planJobsAndRecover(Inputs);
  if (!Planned)
    return Planned.takeError();
  E.Jobs = std::move(Planned->Jobs);
  E.RecoveryNotes = std::move(Planned->RecoveryNotes);
  E.Results = runInventory(E.Jobs, Inputs, Opts.Cache);
  Expected<inv::Inventory> Typed = typedInventory(E.Results, absoluteRoot(Opts.Root));
  if (!Typed)
    return Typed.takeError();
  E.Inventory = std::move(*Typed);
  countStatus(E);
  return E;
}

Error requireAllParsed(const Extraction &E) {
  for (const TUResult &R : E.Results)
    for (const ParseResult *P : {&R.Device, &R.Host})
      if (P->Crash)
        return llvm::make_error<ParseCrashError>("extract", *P->Crash);
  for (const inv::TranslationUnit &TU : E.Inventory.TranslationUnits) {
    if (TU.Status != "error")
      continue;
    std::string Why;
    for (const std::string &Err : TU.Errors)
      if (Why.size() < 2000)
        Why += "\n  " + Err;
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   TU.File + ": does not parse, so its kernels cannot be inventoried:" + Why);
  }
  return Error::success();
}

} // namespace kloop
