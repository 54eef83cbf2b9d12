//===- AddedCode.h - What an edit adds to a translation unit ----*- C++ -*-===//
///
/// \file
/// Checks of kloop apply on the re-parse of edited code that look at what the
/// edit adds to the translation unit rather than at the text it replaces
/// (docs/edits.md, "Added code"; docs/threat-model.md, "Proposals and edits"):
///
/// - `#include` in new text: written `<header>` with `#include`, and resolved
///   by clang's own header search to a file inside the CUDA toolkit's or the
///   compiler's system include directories;
/// - pragmas in new text (directly, through `_Pragma` or through a macro used
///   there): only `unroll` and `nounroll`;
/// - declarations: the TU's top-level declarations after the edit against
///   those before it; what is new may only be `__device__` functions (and the
///   variant kernel of add_kernel_variant), or, from a trusted system header,
///   anything that does no work at program start;
/// - expressions written by set_constant and set_launch_config: no side
///   effects, where a call is allowed when kloop proves the callee's body free
///   of side effects;
/// - device code in new text that nvcc refuses without a flag the command
///   lacks, though clang accepts it: a call of a constexpr function that is not
///   `__device__` (without `--expt-relaxed-constexpr`) and a lambda annotated
///   `__device__` or `__host__` (without `--extended-lambda`).
///
/// All of them run in the re-parse of edited code (withAddedCodeCheck), so they
/// cost no parse of their own. Private to kloopEdit (used by Apply.cpp).
///
//===----------------------------------------------------------------------===//
#ifndef KLOOP_LIB_EDIT_ADDEDCODE_H
#define KLOOP_LIB_EDIT_ADDEDCODE_H

#include "clang/Basic/SourceLocation.h"
#include "kloop/Support/Path.h"
#include "llvm/ADT/StringRef.h"

#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <tuple>
#include <functional>
#include <vector>

namespace clang {
class ASTContext;
class FrontendAction;
class SourceManager;
} // namespace clang

namespace kloop {

/// Text an edit put into the edited files: file (absolute) -> (offset, length,
/// 0-based edit index) in the new contents.
using NewTextRanges = std::map<std::string, std::vector<std::tuple<unsigned, unsigned, unsigned>>>;

// absolutePath: kloop/Support/Path.h.

/// The edit whose new text holds the file location \p L, if any (\p Dir
/// resolves relative file names).
std::optional<unsigned> editAt(const clang::SourceManager &SM, clang::SourceLocation L, const NewTextRanges &R,
                               llvm::StringRef Dir);

/// The edit whose new text holds \p L or any location \p L was expanded through: its
/// spelling, each macro name or argument it came from, and finally its expansion. A
/// construct written in the body of a macro that a set_constant edit wrote is found
/// even where the macro is used in old text.
std::optional<unsigned> editOnChain(const clang::SourceManager &SM, clang::SourceLocation L, const NewTextRanges &R,
                                    llvm::StringRef Dir);

/// " (line N)": the presumed line of \p L's expansion, or "" when unknown.
std::string lineSuffix(const clang::SourceManager &SM, clang::SourceLocation L);

/// The TU's top-level declarations (through namespaces, `extern "C"` blocks and
/// class definitions, whose static data members count) as keys: what the
/// declaration is (kernel, device function, host function, global variable,
/// global with work at program start, ...), its qualified name, its number of
/// parameters, whether it is a definition, and its file. Keys do not hold
/// offsets or parameter types, so edits that change an existing declaration
/// (add_const, set_launch_bounds) keep its key. Implicit declarations are left out.
using DeclCensus = std::multiset<std::string>;

/// The census of the parsed TU \p Ctx.
DeclCensus takeDeclCensus(clang::ASTContext &Ctx);

/// A construct of edited code that refuses an edit.
struct AddedCodeFinding {
  int Edit = -1;      ///< 0-based edit index; -1: the proposal as a whole
  std::string Reason; ///< the refusal reason, as printed after "edit #i (...): "
  /// An include or pragma (NewTextPP): refused before the re-parse's errors, which it may cause.
  bool Preprocessor = false;
};

/// What the added-code check of one parse (one TU, one side) needs.
struct AddedCodeInput {
  /// New text of every edit (includes, pragmas and declarations are checked in all).
  const NewTextRanges *Ranges = nullptr;
  /// New text of set_constant and set_launch_config edits (side effects are checked there).
  const NewTextRanges *ExpressionRanges = nullptr;
  /// The job's directory (relative file names).
  std::string Directory;
  /// The census of the same TU and side before the edit.
  const DeclCensus *Before = nullptr;
  /// add_kernel_variant edits: edit index -> the variant kernel's name.
  std::map<unsigned, std::string> VariantKernels;
  /// Include directories that the job's own flags name (-I, -isystem, ...): a
  /// header found there is the project's, not the toolkit's or the compiler's.
  std::vector<std::string> UserIncludeDirs;
  /// The CUDA toolkit's include directories (empty with -nocudainc).
  std::vector<std::string> CudaIncludeDirs;
};

/// Include directories named by the flags \p Args (-I, -isystem, -idirafter,
/// -iquote, -cxx-isystem, --include-directory, joined or separate) and by the
/// CPATH, C_INCLUDE_PATH and CPLUS_INCLUDE_PATH variables, absolute against \p Dir.
std::vector<std::string> userIncludeDirs(const std::vector<std::string> &Args, llvm::StringRef Dir);

/// \p Wrapped (the re-parse's own action), with the checks above run in the same
/// parse: every finding is appended to \p Out. \p In must outlive the parse. The
/// caller reports the findings only when the edited code compiles without new
/// diagnostics (a broken TU makes the declaration census meaningless).
std::unique_ptr<clang::FrontendAction> withAddedCodeCheck(std::unique_ptr<clang::FrontendAction> Wrapped,
                                                          const AddedCodeInput &In,
                                                          std::vector<AddedCodeFinding> &Out);

/// How many calls deep kloop follows a helper called from a launch expression
/// or constant before it gives up proving it free of side effects (kloop's
/// choice: deep enough for helpers such as ceil_div calling std::min).
constexpr unsigned MaxPurityDepth = 8;

} // namespace kloop

#endif
