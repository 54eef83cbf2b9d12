//===- KernelNames.cpp - Kernel symbols as nvcc names them ----------------===//
//
// nvccSymbol() reads clang's Itanium name with LLVM's demangling parser,
// noting where the parts nvcc spells differently sit (anonymous namespaces,
// `L` internal-linkage markers, internal entities inside template arguments,
// substitution references), then splices nvcc's spelling in. The rules are in
// include/kloop/Inventory/KernelNames.h.
//
//===----------------------------------------------------------------------===//
#include "kloop/Inventory/KernelNames.h"
#include "kloop/Support/JSON.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Demangle/Demangle.h"
#include "llvm/Demangle/ItaniumDemangle.h"
#include "llvm/Support/Allocator.h"
#include "llvm/Support/CRC.h"
#include "llvm/Support/Path.h"

#include <map>
#include <set>
#include <vector>

using namespace llvm;
using nlohmann::json;
namespace id = llvm::itanium_demangle;

namespace kloop {

static std::string crc32Hex(StringRef S) {
  uint32_t C = llvm::crc32(arrayRefFromStringRef(S));
  return utohexstr(C, /*LowerCase=*/true, /*Width=*/8);
}

std::string nvccModuleId(StringRef SourceRealPath, StringRef FirstExternalName) {
  std::string File = sys::path::filename(SourceRealPath).str();
  for (char &C : File)
    if (!isAlnum(C))
      C = '_';
  std::string Tail = FirstExternalName.size() <= 8 ? FirstExternalName.str() : crc32Hex(FirstExternalName);
  return "_" + crc32Hex(SourceRealPath) + "_" + std::to_string(File.size()) + "_" + File + "_" + Tail;
}

namespace {

/// Allocates the demangler's nodes; they die with the scan.
class NodeAllocator {
  BumpPtrAllocator Alloc;

public:
  void reset() { Alloc.Reset(); }
  template <typename T, typename... Args> T *makeNode(Args &&...As) {
    return new (Alloc.Allocate(sizeof(T), alignof(T))) T(std::forward<Args>(As)...);
  }
  void *allocateNodeArray(size_t N) { return Alloc.Allocate(sizeof(id::Node *) * N, alignof(id::Node *)); }
};

/// Where one encoding sits: the whole symbol, a `L_Z...E` template argument
/// naming an entity, or the function of a local name (`Z...E`).
enum class Context { Top, EntityArg, Local };

/// An internal entity named inside a template argument (`L_Z<encoding>E`).
struct InternalEntity {
  size_t NameBegin = 0, NameEnd = 0; ///< the encoding's <name>
  size_t LPos = std::string::npos;   ///< its `L` marker, if any
  bool Nested = false;               ///< `N...E` (else an unscoped name)
  size_t SubsAtName = 0;             ///< substitution candidates before the name
  size_t SubsAtEntity = 0;           ///< ... before its own (last) component
};

struct Splice {
  size_t Begin, End;
  std::string Text;
};

/// Records positions while LLVM's parser reads a mangled name.
class Scanner : public id::AbstractManglingParser<Scanner, NodeAllocator> {
  using Base = id::AbstractManglingParser<Scanner, NodeAllocator>;

public:
  Scanner(StringRef S) : Base(S.begin(), S.end()), Begin(S.begin()) {}

  id::Node *parseEncoding(bool ParseParams = true) {
    size_t P = pos();
    Context C = P == 2 ? Context::Top
                : P >= 3 && StringRef(Begin + P - 3, 3) == "L_Z" ? Context::EntityArg
                                                                  : Context::Local;
    Frame New;
    New.C = C;
    New.AwaitName = look() != 'G' && look() != 'T';
    Frames.push_back(New);
    id::Node *R = Base::parseEncoding(ParseParams);
    Frame F = Frames.back();
    Frames.pop_back();
    if (C == Context::Top)
      TopName = {F.Entity.NameBegin, F.Entity.NameEnd};
    bool Internal = F.Entity.Nested || F.Entity.LPos != std::string::npos;
    if (R && Internal && C == Context::EntityArg)
      Entities.push_back(F.Entity);
    if (R && C == Context::Local && F.Entity.LPos != std::string::npos)
      Unsupported = "an internal function enclosing a local entity";
    return R;
  }

  id::Node *parseName(NameState *State = nullptr) {
    if (Frames.empty() || !Frames.back().AwaitName)
      return Base::parseName(State);
    Frame &F = Frames.back();
    F.AwaitName = false;
    F.InName = true;
    F.Entity.NameBegin = pos();
    F.Entity.SubsAtName = Subs.size();
    id::Node *R = Base::parseName(State);
    Frame &G = Frames.back();
    G.InName = false;
    G.Entity.NameEnd = pos();
    return R;
  }

  id::Node *parseTemplateArgs(bool TagTemplates = false) {
    if (!Frames.empty())
      ++Frames.back().ArgDepth;
    id::Node *R = Base::parseTemplateArgs(TagTemplates);
    if (!Frames.empty())
      --Frames.back().ArgDepth;
    return R;
  }

  id::Node *parseUnqualifiedName(NameState *State, id::Node *Scope, id::ModuleName *Module) {
    size_t P = pos();
    if (Scope && P < len() && Begin[P] == 'F')
      ++P;
    if (directComponent()) {
      Frame &F = Frames.back();
      if (P < len() && Begin[P] == 'L') {
        F.Entity.LPos = P;
        F.Entity.SubsAtEntity = Subs.size();
        if (F.C == Context::Top)
          Splices.push_back({P, P + 1, ""}); // nvcc does not mark the kernel's own linkage
      }
      if (F.C == Context::EntityArg && Begin[F.Entity.NameBegin] == 'N' && !F.Entity.Nested) {
        F.Entity.Nested = isInternalNested(F);
        F.Entity.SubsAtEntity = Subs.size();
      }
    }
    return Base::parseUnqualifiedName(State, Scope, Module);
  }

  id::Node *parseSourceName(NameState *State) {
    size_t P = pos();
    id::Node *R = Base::parseSourceName(State);
    if (!R)
      return R;
    size_t Digits = P;
    while (Digits < pos() && isDigit(Begin[Digits]))
      ++Digits;
    StringRef Name(Begin + Digits, pos() - Digits);
    if (Name.starts_with("_GLOBAL__N")) {
      AnonNamespaces.push_back({P, pos()});
      if (directComponent() && Frames.back().C == Context::EntityArg)
        Frames.back().AnonDirect = true;
    }
    return R;
  }

  id::Node *parseSubstitution() {
    size_t P = pos();
    id::Node *R = Base::parseSubstitution();
    if (!R || pos() - P < 2 || Begin[pos() - 1] != '_')
      return R;
    // S_ is candidate 0, S<base-36 n>_ is candidate n + 1.
    size_t Index = 0;
    StringRef Seq(Begin + P + 1, pos() - P - 2);
    if (!Seq.empty()) {
      unsigned long long N = 0;
      if (Seq.getAsInteger(36, N))
        return R;
      Index = N + 1;
    }
    Refs.push_back({P, pos(), Index});
    return R;
  }

  struct Ref {
    size_t Begin, End, Index;
  };
  std::vector<std::pair<size_t, size_t>> AnonNamespaces;
  std::vector<InternalEntity> Entities;
  std::vector<Ref> Refs;
  std::vector<Splice> Splices;
  std::string Unsupported;
  /// The symbol's own <name> (template arguments included, parameters not).
  std::pair<size_t, size_t> TopName{0, 0};

  /// nvcc gives the kernel internal linkage: its own name is static (`L`),
  /// or has an anonymous namespace or an internal entity in it. A parameter
  /// of an anonymous-namespace type does not count (read off nvcc 13 -rdc).
  bool internalKernel() const {
    auto InName = [&](size_t P) { return P >= TopName.first && P < TopName.second; };
    for (const Splice &X : Splices)
      if (InName(X.Begin))
        return true;
    for (auto [B, E] : AnonNamespaces)
      if (InName(B))
        return true;
    for (const InternalEntity &E : Entities)
      if (InName(E.NameBegin))
        return true;
    return false;
  }

private:
  struct Frame {
    Context C = Context::Top;
    bool AwaitName = false, InName = false, AnonDirect = false;
    unsigned ArgDepth = 0;
    InternalEntity Entity;
  };

  size_t pos() const { return First - Begin; }
  size_t len() const { return Last - Begin; }
  /// A component of the current encoding's own name (not of its arguments).
  bool directComponent() const {
    return !Frames.empty() && Frames.back().InName && Frames.back().ArgDepth == 0;
  }
  /// An entity in a nested name is internal when a component is an anonymous
  /// namespace; the `L` case is noted separately.
  bool isInternalNested(const Frame &F) const { return F.AnonDirect; }

  const char *Begin;
  std::vector<Frame> Frames;
};

std::string seqId(size_t Index) {
  if (Index == 0)
    return "S_";
  std::string S;
  for (size_t N = Index - 1;; N /= 36) {
    S.insert(S.begin(), "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ"[N % 36]);
    if (N < 36)
      break;
  }
  return "S" + S + "_";
}

/// The splices that put every internal entity under `_INTERNAL<module id>`.
Error internalEntitySplices(const Scanner &S, StringRef Mangled, StringRef ModuleId,
                            std::vector<Splice> &Out, std::optional<size_t> &InsertedAt,
                            std::set<size_t> &Tainted) {
  std::string Pseudo = "_INTERNAL" + ModuleId.str();
  // nvcc spells the pseudo-namespace out where it first appears in the symbol.
  std::vector<InternalEntity> Entities = S.Entities;
  llvm::sort(Entities, [](const InternalEntity &A, const InternalEntity &B) { return A.NameBegin < B.NameBegin; });
  for (const InternalEntity &E : Entities) {
    bool HasL = E.LPos != std::string::npos;
    bool Nested = Mangled[E.NameBegin] == 'N';
    if (Nested && !isDigit(Mangled[E.NameBegin + 1]))
      return createStringError(inconvertibleErrorCode(),
                               "an internal entity whose scope is a substitution or std::");
    std::string Prefix = InsertedAt ? seqId(*InsertedAt) : std::to_string(Pseudo.size()) + Pseudo;
    if (Nested) {
      Out.push_back({E.NameBegin + 1, E.NameBegin + 1, Prefix});
      if (HasL)
        Out.push_back({E.LPos, E.LPos + 1, ""});
      for (size_t I = E.SubsAtName; I < E.SubsAtEntity; ++I)
        Tainted.insert(I); // clang's `ns` is nvcc's `_INTERNAL...::ns`
    } else if (HasL) {
      Out.push_back({E.LPos, E.LPos + 1, "N" + Prefix});
      Out.push_back({E.NameEnd, E.NameEnd, "E"});
    }
    if (!InsertedAt)
      InsertedAt = E.SubsAtName;
  }
  return Error::success();
}

std::string applySplices(StringRef S, std::vector<Splice> Splices) {
  std::stable_sort(Splices.begin(), Splices.end(),
                   [](const Splice &A, const Splice &B) {
                     // At one position an insertion goes before a replacement.
                     return A.Begin != B.Begin ? A.Begin < B.Begin : (A.End == A.Begin) > (B.End == B.Begin);
                   });
  std::string Out;
  size_t At = 0;
  for (const Splice &X : Splices) {
    Out += S.slice(At, X.Begin).str();
    Out += X.Text;
    At = std::max(At, X.End);
  }
  Out += S.substr(At).str();
  return Out;
}

/// `__nv_static_<n>_<module id>_` in front of \p S, or "" when absent.
StringRef nvStaticPrefix(StringRef S) {
  StringRef Rest = S;
  if (!Rest.consume_front("__nv_static_"))
    return "";
  size_t N = 0;
  if (Rest.consumeInteger(10, N) || !Rest.consume_front("_") || Rest.size() < N + 1 || Rest[N] != '_')
    return "";
  return S.take_front(S.size() - Rest.size() + N + 1);
}

} // namespace

Expected<std::string> nvccSymbol(StringRef ClangMangled, StringRef ModuleId, bool Rdc) {
  auto Fail = [&](const Twine &Why) {
    return createStringError(inconvertibleErrorCode(), "cannot spell '" + ClangMangled + "' as nvcc does: " + Why);
  };
  if (!ClangMangled.starts_with("_Z"))
    return ClangMangled.str();
  Scanner S(ClangMangled);
  if (!S.parse())
    return Fail("it does not demangle");
  if (!S.Unsupported.empty())
    return Fail(S.Unsupported);
  std::vector<Splice> Splices = S.Splices;
  std::string Anon = "_GLOBAL__N_" + ModuleId.str();
  for (auto [B, E] : S.AnonNamespaces)
    Splices.push_back({B, E, std::to_string(Anon.size()) + Anon});
  std::optional<size_t> InsertedAt;
  std::set<size_t> Tainted;
  if (Error Err = internalEntitySplices(S, ClangMangled, ModuleId, Splices, InsertedAt, Tainted))
    return Fail(toString(std::move(Err)));
  for (const Scanner::Ref &R : S.Refs) {
    if (Tainted.count(R.Index))
      return Fail("a substitution refers to the scope of an internal entity");
    if (InsertedAt && R.Index >= *InsertedAt)
      Splices.push_back({R.Begin, R.End, seqId(R.Index + 1)});
  }
  std::string Out = applySplices(ClangMangled, Splices);
  if (kernelMatchKey(Out) != kernelMatchKey(ClangMangled))
    return Fail("the rewritten name '" + Out + "' names another entity");
  if (Rdc && S.internalKernel())
    Out = "__nv_static_" + std::to_string(ModuleId.size()) + "_" + ModuleId.str() + "_" + Out;
  return Out;
}

std::string kernelMatchKey(StringRef Symbol) {
  Symbol = Symbol.drop_front(nvStaticPrefix(Symbol).size());
  std::string D = llvm::demangle(Symbol);
  // Drop each `_INTERNAL_...::` qualifier nvcc adds.
  std::string Out;
  StringRef Rest = D;
  for (size_t At; (At = Rest.find("_INTERNAL_")) != StringRef::npos;) {
    size_t End = Rest.find("::", At);
    if (End == StringRef::npos)
      break;
    Out += Rest.take_front(At).str();
    Rest = Rest.drop_front(End + 2);
  }
  return Out + Rest.str();
}

bool symbolNamesKernel(const KernelSymbol &K, StringRef Seen) {
  if (Seen.empty())
    return false;
  if (Seen == K.Nvcc || Seen == K.Clang)
    return true;
  return K.Internal && !K.Key.empty() && kernelMatchKey(Seen) == K.Key;
}

json toJson(const KernelSymbol &K) {
  json J{{"mangled", K.Nvcc.empty() ? K.Clang : K.Nvcc},
         {"clang_mangled", K.Clang},
         {"nvcc_known", !K.Nvcc.empty()},
         {"linkage", K.Internal ? "internal" : "external"},
         {"match_key", K.Key}};
  if (K.Nvcc.empty())
    J["nvcc_unknown_reason"] = K.Unknown;
  return J;
}

KernelSymbol kernelSymbolOf(const inv::Symbol &S) {
  KernelSymbol K;
  K.Clang = S.ClangMangled;
  K.Nvcc = S.NvccKnown ? S.Mangled : "";
  K.Unknown = S.NvccUnknownReason.value_or("");
  K.Internal = S.Linkage == "internal";
  K.Key = S.MatchKey;
  return K;
}

std::vector<KernelSymbol> inventoryKernelSymbols(const inv::Kernel &Kernel) {
  std::vector<KernelSymbol> Out;
  for (const inv::Symbol &S : Kernel.Symbols)
    Out.push_back(kernelSymbolOf(S));
  return Out;
}

} // namespace kloop
