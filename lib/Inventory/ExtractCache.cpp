//===- ExtractCache.cpp - Reusing unchanged TU parses ----------------------===//
#include "kloop/Inventory/ExtractCache.h"
#include "kloop/Support/AtomicFile.h"
#include "kloop/Support/JSON.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Process.h"
#include "llvm/Support/SHA256.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/Support/xxhash.h"

using namespace llvm;
using nlohmann::json;

namespace kloop {

/// Version of the entry format; bumped when tuResultToJSON changes.
static constexpr int CacheFormatVersion = 3; // 3: hardware_uses

std::string defaultExtractCacheDir() {
  SmallString<256> Dir;
  if (std::optional<std::string> X = sys::Process::GetEnv("XDG_CACHE_HOME"); X && !X->empty())
    Dir = *X;
  else if (std::optional<std::string> H = sys::Process::GetEnv("HOME"); H && !H->empty())
    sys::path::append(Dir, *H, ".cache");
  else
    return "";
  sys::path::append(Dir, "kloop", "extract");
  return std::string(Dir);
}

// ---------------------------------------------------------------------------
// TUResult <-> JSON
// ---------------------------------------------------------------------------

static json spanToJSON(const SourceSpan &S) {
  return {S.File, S.BeginLine, S.BeginColumn, S.EndLine, S.EndColumn, S.BeginOffset, S.EndOffset};
}

static SourceSpan spanFromJSON(const json &J) {
  SourceSpan S;
  S.File = J.at(0).get<std::string>();
  S.BeginLine = J.at(1).get<unsigned>();
  S.BeginColumn = J.at(2).get<unsigned>();
  S.EndLine = J.at(3).get<unsigned>();
  S.EndColumn = J.at(4).get<unsigned>();
  S.BeginOffset = J.at(5).get<unsigned>();
  S.EndOffset = J.at(6).get<unsigned>();
  return S;
}

static EntityKind entityKindFromName(const std::string &Name) {
  for (int K = 0; K <= static_cast<int>(EntityKind::Constant); ++K)
    if (Name == entityKindName(static_cast<EntityKind>(K)))
      return static_cast<EntityKind>(K);
  throw std::invalid_argument("unknown entity kind '" + Name + "'");
}

static json diagToJSON(const ParseDiagnostic &D) { return {D.File, D.Line, D.Column, D.Level, D.Message}; }

static ParseDiagnostic diagFromJSON(const json &D) {
  ParseDiagnostic PD;
  PD.File = D.at(0).get<std::string>();
  PD.Line = D.at(1).get<unsigned>();
  PD.Column = D.at(2).get<unsigned>();
  PD.Level = D.at(3).get<std::string>();
  PD.Message = D.at(4).get<std::string>();
  return PD;
}

static json pointToJSON(const SourcePoint &P) { return {P.File, P.Offset}; }

static SourcePoint pointFromJSON(const json &J) {
  return SourcePoint{J.at(0).get<std::string>(), J.at(1).get<unsigned>()};
}

static json errorsToJSON(const std::vector<LocatedError> &Errors) {
  json Out = json::array();
  for (const LocatedError &E : Errors) {
    json Context = json::array();
    for (const SourcePoint &P : E.Context)
      Context.push_back(pointToJSON(P));
    Out.push_back({{"diag", diagToJSON(E.Diag)},
                   {"side", sideName(E.Which)},
                   {"at", pointToJSON(E.At)},
                   {"context", Context}});
  }
  return Out;
}

static std::vector<LocatedError> errorsFromJSON(const json &J) {
  std::vector<LocatedError> Out;
  for (const json &E : J) {
    LocatedError L;
    L.Diag = diagFromJSON(E.at("diag"));
    L.Which = E.at("side").get<std::string>() == "host" ? Side::Host : Side::Device;
    L.At = pointFromJSON(E.at("at"));
    for (const json &P : E.at("context"))
      L.Context.push_back(pointFromJSON(P));
    Out.push_back(std::move(L));
  }
  return Out;
}

static json sideToJSON(const SideInventory &S) {
  json Entities = json::array();
  for (const Entity &E : S.Entities)
    Entities.push_back({{"id", E.ID},
                        {"kind", entityKindName(E.Kind)},
                        {"owner", E.Owner},
                        {"span", spanToJSON(E.Span)},
                        {"editable", E.Editable},
                        {"not_editable_reason", E.NotEditableReason},
                        {"data", E.Data},
                        {"errors", errorsToJSON(E.Errors)},
                        {"invalid_decl", E.InvalidDecl}});
  return {{"side", sideName(S.Which)},
          {"entities", Entities},
          {"constant_uses", S.ConstantUses},
          {"hardware_uses", S.HardwareUses},
          {"parsed", S.Parsed},
          {"errors", errorsToJSON(S.Errors)}};
}

static SideInventory sideFromJSON(const json &J) {
  SideInventory S;
  S.Which = J.at("side").get<std::string>() == "host" ? Side::Host : Side::Device;
  for (const json &E : J.at("entities")) {
    Entity En;
    En.ID = E.at("id").get<std::string>();
    En.Kind = entityKindFromName(E.at("kind").get<std::string>());
    En.Owner = E.at("owner").get<std::string>();
    En.Span = spanFromJSON(E.at("span"));
    En.Editable = E.at("editable").get<bool>();
    En.NotEditableReason = E.at("not_editable_reason").get<std::string>();
    En.Data = E.at("data");
    En.Errors = errorsFromJSON(E.at("errors"));
    En.InvalidDecl = E.at("invalid_decl").get<bool>();
    S.Entities.push_back(std::move(En));
  }
  S.ConstantUses = J.at("constant_uses").get<std::vector<json>>();
  S.HardwareUses = J.at("hardware_uses").get<std::vector<json>>();
  S.Parsed = J.at("parsed").get<bool>();
  S.Errors = errorsFromJSON(J.at("errors"));
  return S;
}

static json parseToJSON(const ParseResult &P) {
  json Diags = json::array();
  for (const ParseDiagnostic &D : P.Diagnostics)
    Diags.push_back(diagToJSON(D));
  return {{"ok", P.Ok}, {"diagnostics", Diags}, {"input_files", P.InputFiles}};
}

static ParseResult parseFromJSON(const json &J) {
  ParseResult P;
  P.Ok = J.at("ok").get<bool>();
  for (const json &D : J.at("diagnostics"))
    P.Diagnostics.push_back(diagFromJSON(D));
  P.InputFiles = J.at("input_files").get<std::vector<std::string>>();
  return P;
}

json tuResultToJSON(const TUResult &R) {
  return {{"format", CacheFormatVersion},
          {"device", parseToJSON(R.Device)},
          {"host", parseToJSON(R.Host)},
          {"device_inventory", sideToJSON(R.DeviceInv)},
          {"host_inventory", sideToJSON(R.HostInv)}};
}

Expected<TUResult> tuResultFromJSON(const json &J) {
  try {
    if (J.at("format").get<int>() != CacheFormatVersion)
      return createStringError(inconvertibleErrorCode(), "cache entry of another format version");
    TUResult R;
    R.Device = parseFromJSON(J.at("device"));
    R.Host = parseFromJSON(J.at("host"));
    R.DeviceInv = sideFromJSON(J.at("device_inventory"));
    R.HostInv = sideFromJSON(J.at("host_inventory"));
    return R;
  } catch (const std::exception &E) {
    return createStringError(inconvertibleErrorCode(), "malformed cache entry: %s", E.what());
  }
}

// ---------------------------------------------------------------------------
// The cache
// ---------------------------------------------------------------------------

static std::string hex128(ArrayRef<uint8_t> Bytes) {
  XXH128_hash_t H = xxh3_128bits(Bytes);
  return utohexstr(H.high64, /*LowerCase=*/true, 16) + utohexstr(H.low64, true, 16);
}

std::string executableId() {
  std::string Self = sys::fs::getMainExecutable(nullptr, nullptr);
  auto Buf = MemoryBuffer::getFile(Self.empty() ? "/proc/self/exe" : Self, /*IsText=*/false,
                                   /*RequiresNullTerminator=*/false);
  if (!Buf)
    return "unknown";
  return hex128(arrayRefFromStringRef((*Buf)->getBuffer()));
}

ExtractCache::ExtractCache(std::string Dir, std::string ExecutableId)
    : Dir(std::move(Dir)), ExeId(std::move(ExecutableId)) {}

std::string ExtractCache::key(const CompileJob &Job, const FrontendOptions &Opts) const {
  SHA256 H;
  auto add = [&](StringRef S) {
    H.update(S);
    H.update(StringRef("\0", 1));
  };
  add(ExeId);
  add(std::to_string(InventorySchemaVersion) + "." + std::to_string(CacheFormatVersion));
  add(Job.Directory);
  // The include paths clang takes from the environment.
  for (const char *Var : {"CPATH", "C_INCLUDE_PATH", "CPLUS_INCLUDE_PATH"})
    add(sys::Process::GetEnv(Var).value_or("<unset>"));
  for (Side S : {Side::Device, Side::Host}) {
    add(sideName(S));
    for (const std::string &A : sideCommandLine(Job, S, Opts))
      add(A);
  }
  std::array<uint8_t, 32> D = H.final();
  return toHex(D, /*LowerCase=*/true);
}

std::optional<std::string> ExtractCache::contentHash(const std::string &Path) {
  {
    std::lock_guard<std::mutex> L(Mu);
    auto It = Hashes.find(Path);
    if (It != Hashes.end())
      return It->second;
  }
  std::optional<std::string> H;
  if (auto Buf = MemoryBuffer::getFile(Path, /*IsText=*/false, /*RequiresNullTerminator=*/false))
    H = hex128(arrayRefFromStringRef((*Buf)->getBuffer()));
  std::lock_guard<std::mutex> L(Mu);
  Hashes[Path] = H;
  return H;
}

static std::string entryPath(StringRef Dir, StringRef Key) {
  SmallString<256> P(Dir);
  sys::path::append(P, Key.substr(0, 2), Key.str() + ".json");
  return std::string(P);
}

std::optional<TUResult> ExtractCache::lookup(StringRef Key, const CompileJob &Job) {
  auto Buf = MemoryBuffer::getFile(entryPath(Dir, Key), /*IsText=*/true);
  if (!Buf)
    return std::nullopt;
  json J = json::parse((*Buf)->getBuffer().begin(), (*Buf)->getBuffer().end(), nullptr,
                       /*allow_exceptions=*/false);
  if (!J.is_object() || !J.contains("files") || !J["files"].is_object())
    return std::nullopt;
  for (const auto &[Path, Hash] : J["files"].items()) {
    std::optional<std::string> Now = contentHash(Path);
    if (!Now || !Hash.is_string() || *Now != Hash.get<std::string>())
      return std::nullopt;
  }
  Expected<TUResult> R = tuResultFromJSON(J["result"]);
  if (!R) {
    consumeError(R.takeError());
    return std::nullopt;
  }
  R->Job = Job;
  ++Hits;
  return std::move(*R);
}

/// True when \p Path was modified at or after one second before \p Start, or
/// cannot be examined.
static bool tooNew(const std::string &Path, std::chrono::system_clock::time_point Start) {
  sys::fs::file_status St;
  if (sys::fs::status(Path, St))
    return true;
  return St.getLastModificationTime() >= Start - std::chrono::seconds(1);
}

Error ExtractCache::store(StringRef Key, const TUResult &R, std::chrono::system_clock::time_point ParseStart) {
  if (R.Job.Error || R.Device.InputFiles.empty() || R.Host.InputFiles.empty())
    return Error::success();
  json Files = json::object();
  for (const ParseResult *P : {&R.Device, &R.Host})
    for (const std::string &F : P->InputFiles) {
      std::optional<std::string> H = contentHash(F);
      if (!H || tooNew(F, ParseStart))
        return Error::success(); // vanished, or may have changed while it was parsed
      Files[F] = *H;
    }
  Error E = writeEntry(Key, Files, R);
  if (E) {
    std::string Msg = toString(std::move(E));
    std::lock_guard<std::mutex> L(Mu);
    if (FirstStoreError.empty())
      FirstStoreError = Msg;
    return createStringError(inconvertibleErrorCode(), Msg);
  }
  ++Stores;
  return Error::success();
}

std::string ExtractCache::firstStoreError() const {
  std::lock_guard<std::mutex> L(Mu);
  return FirstStoreError;
}

Error ExtractCache::writeEntry(StringRef Key, const json &Files, const TUResult &R) {
  std::string Path = entryPath(Dir, Key);
  if (std::error_code EC = sys::fs::create_directories(sys::path::parent_path(Path)))
    return createStringError(EC, "%s: cannot create the cache directory: %s", Path.c_str(),
                             EC.message().c_str());
  json Entry{{"files", Files}, {"result", tuResultToJSON(R)}};
  return writeFileAtomically(Path, dumpJSON(Entry));
}

std::unique_ptr<ExtractCache> openExtractCache(StringRef Dir, bool Disabled) {
  std::string D = Dir.empty() ? defaultExtractCacheDir() : Dir.str();
  if (Disabled || D.empty())
    return nullptr;
  return std::make_unique<ExtractCache>(D, executableId());
}

} // namespace kloop
