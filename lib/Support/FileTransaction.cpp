//===- FileTransaction.cpp - All-or-nothing multi-file writes -------------===//
#include "kloop/Support/FileTransaction.h"
#include "kloop/Support/JSON.h"
#include "kloop/Support/AtomicFile.h"

#include "llvm/ADT/SmallString.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/SHA256.h"

#include <nlohmann/json.hpp>

#include <cerrno>
#include <csignal>
#include <optional>
#include <set>
#include <sys/stat.h>
#include <unistd.h>

using namespace llvm;
using json = nlohmann::json;

namespace kloop {

namespace {
Error err(const Twine &Msg) { return createStringError(inconvertibleErrorCode(), Msg); }

std::optional<std::string> readFile(StringRef Path) {
  ErrorOr<std::unique_ptr<MemoryBuffer>> B = MemoryBuffer::getFile(Path, /*IsText=*/false,
                                                                   /*RequiresNullTerminator=*/false);
  if (!B)
    return std::nullopt;
  return (*B)->getBuffer().str();
}

std::string sha256Hex(StringRef Data) { return toHex(SHA256::hash(arrayRefFromStringRef(Data)), true); }

std::string hashOfFile(StringRef Path) {
  std::optional<std::string> C = readFile(Path);
  return C ? sha256Hex(*C) : std::string();
}

/// The deepest directory containing every path of \p Paths (absolute).
std::string commonDirectory(ArrayRef<std::string> Paths) {
  std::string Dir = sys::path::parent_path(Paths.front()).str();
  for (const std::string &P : Paths)
    while (!Dir.empty() && !(StringRef(P).starts_with(Dir) && P.size() > Dir.size() &&
                             (Dir == "/" || P[Dir.size()] == '/')))
      Dir = sys::path::parent_path(Dir).str();
  return Dir.empty() ? std::string("/") : Dir;
}

std::string relativeTo(StringRef Path, StringRef Dir) {
  StringRef R = Path;
  R.consume_front(Dir);
  R.consume_front("/");
  return R.str();
}

std::string absoluteOf(StringRef Path) {
  SmallString<256> A(Path);
  sys::fs::make_absolute(A);
  sys::path::remove_dots(A, true);
  return std::string(A);
}

/// One file of a transaction as written in the manifest (absolute paths here).
struct Entry {
  std::string Target, Temp, Backup, OldHash, NewHash;
};

void removeFiles(ArrayRef<Entry> Entries) {
  for (const Entry &E : Entries) {
    if (!E.Temp.empty())
      ::unlink(E.Temp.c_str());
    if (!E.Backup.empty())
      ::unlink(E.Backup.c_str());
  }
}

json manifestJSON(ArrayRef<Entry> Entries, StringRef Dir) {
  json Files = json::array();
  for (const Entry &E : Entries)
    Files.push_back({{"path", relativeTo(E.Target, Dir)},
                     {"temp", relativeTo(E.Temp, Dir)},
                     {"backup", relativeTo(E.Backup, Dir)},
                     {"old_sha256", E.OldHash},
                     {"new_sha256", E.NewHash}});
  return {{"kloop_intent", 1}, {"pid", static_cast<int>(::getpid())}, {"files", Files}};
}

Error staleError(StringRef Path) {
  return err(Path + " changed since kloop read it; not overwritten (nothing was written; run kloop again on the "
                    "current contents)");
}

/// Restores \p Done (already renamed) from their backups.
void rollBack(ArrayRef<Entry> Done) {
  for (const Entry &E : Done)
    consumeError(commitTempFile(E.Backup, E.Target));
}

/// Resolved targets, checked against what kloop read.
Expected<std::vector<Entry>> planEntries(ArrayRef<FileReplacement> Files) {
  std::vector<Entry> Entries;
  std::set<std::string> Seen;
  for (const FileReplacement &F : Files) {
    Expected<std::string> T = resolveWriteTarget(absoluteOf(F.Path));
    if (!T)
      return T.takeError();
    if (!Seen.insert(*T).second)
      return err("cannot write " + F.Path + ": the same file is named twice (through a symbolic link)");
    std::optional<std::string> Now = readFile(*T);
    if (!Now)
      return err("cannot read " + F.Path + " before rewriting it");
    if (*Now != F.Before)
      return staleError(F.Path);
    Entries.push_back({*T, "", "", sha256Hex(F.Before), sha256Hex(F.After)});
  }
  return Entries;
}

/// Temporaries (new contents) and backups (old contents), all fsynced.
Error writeSiblings(std::vector<Entry> &Entries, ArrayRef<FileReplacement> Files) {
  for (size_t I = 0; I < Entries.size(); ++I) {
    Expected<std::string> Temp = writeTempFileNextTo(Entries[I].Target, Files[I].After);
    if (!Temp)
      return Temp.takeError();
    Entries[I].Temp = *Temp;
    Expected<std::string> Bak = writeTempFileNextTo(Entries[I].Target, Files[I].Before);
    if (!Bak)
      return Bak.takeError();
    std::string BakName = siblingFileName(Entries[I].Target, "bak", static_cast<int>(::getpid()));
    if (::rename(Bak->c_str(), BakName.c_str()) != 0) {
      ::unlink(Bak->c_str());
      return createStringError(std::error_code(errno, std::generic_category()),
                               "cannot write a backup of " + Entries[I].Target);
    }
    Entries[I].Backup = BakName;
  }
  return Error::success();
}

/// Renames each temporary over its target, checking the target just before.
Error renameAll(ArrayRef<Entry> Entries, ArrayRef<FileReplacement> Files) {
  for (size_t I = 0; I < Entries.size(); ++I) {
    std::optional<std::string> Now = readFile(Entries[I].Target);
    Error E = !Now || *Now != Files[I].Before ? staleError(Files[I].Path)
                                               : commitTempFile(Entries[I].Temp, Entries[I].Target);
    if (E) {
      rollBack(Entries.take_front(I));
      return E;
    }
  }
  return Error::success();
}
} // namespace

Error replaceFilesAtomically(ArrayRef<FileReplacement> Files) {
  if (Files.empty())
    return Error::success();
  Expected<std::vector<Entry>> Planned = planEntries(Files);
  if (!Planned)
    return Planned.takeError();
  std::vector<Entry> &Entries = *Planned;
  std::vector<std::string> Targets;
  for (const Entry &E : Entries)
    Targets.push_back(E.Target);
  std::string Dir = commonDirectory(Targets);
  SmallString<256> Manifest(Dir);
  sys::path::append(Manifest, IntentManifestName);
  if (sys::fs::exists(Manifest))
    return err("cannot write: " + Manifest + " records an unfinished kloop write in this tree; run kloop again "
               "(apply, extract or optimize) to finish or roll it back");
  Error E = writeSiblings(Entries, Files);
  if (!E)
    E = writeFileAtomically(Manifest, dumpJSON(manifestJSON(Entries, Dir), 2) + "\n");
  if (!E) {
    E = renameAll(Entries, Files);
    // After a refusal the manifest still names the restored files; remove it only once they are back.
    ::unlink(Manifest.c_str());
    consumeError(syncDirectory(Dir));
  }
  removeFiles(Entries);
  return E;
}

// ---- recovery ----------------------------------------------------------------------

namespace {
/// The manifest's entries with absolute paths; each must stay inside \p Dir.
Expected<std::vector<Entry>> readManifest(StringRef Path, StringRef Dir, int &Pid) {
  std::optional<std::string> Text = readFile(Path);
  if (!Text)
    return err("cannot read " + Path);
  json J = json::parse(*Text, nullptr, /*allow_exceptions=*/false);
  auto bad = [&](const Twine &Why) { return err(Path + " is not a kloop intent manifest: " + Why); };
  if (!J.is_object() || !J.contains("files") || !J["files"].is_array())
    return bad("expected an object with a \"files\" array");
  Pid = J.contains("pid") && J["pid"].is_number_integer() ? J["pid"].get<int>() : 0;
  std::vector<Entry> Entries;
  for (const json &F : J["files"]) {
    Entry E;
    std::string *Fields[] = {&E.Target, &E.Temp, &E.Backup, &E.OldHash, &E.NewHash};
    const char *Keys[] = {"path", "temp", "backup", "old_sha256", "new_sha256"};
    for (int K = 0; K < 5; ++K) {
      if (!F.is_object() || !F.contains(Keys[K]) || !F[Keys[K]].is_string())
        return bad(Twine("a file entry lacks the string \"") + Keys[K] + "\"");
      *Fields[K] = F[Keys[K]].get<std::string>();
    }
    for (std::string *P : {&E.Target, &E.Temp, &E.Backup}) {
      if (P->empty() || sys::path::is_absolute(*P) || StringRef(*P).contains(".."))
        return bad("the path '" + *P + "' leaves the manifest's directory");
      *P = (Dir + "/" + *P).str();
    }
    if (!StringRef(E.Temp).starts_with(E.Target + ".kloop-tmp.") ||
        !StringRef(E.Backup).starts_with(E.Target + ".kloop-bak."))
      return bad("the temporary or backup of '" + E.Target + "' is not named as kloop names them");
    Entries.push_back(std::move(E));
  }
  return Entries;
}

std::string names(ArrayRef<std::string> L) { return join(L, ", "); }

/// Finishes or rolls back the write that \p Path records; one line for the caller.
Expected<std::string> recoverManifest(StringRef Path) {
  std::string Dir = sys::path::parent_path(Path).str();
  int Pid = 0;
  Expected<std::vector<Entry>> Read = readManifest(Path, Dir, Pid);
  if (!Read)
    return Read.takeError();
  std::vector<Entry> &Entries = *Read;
  if (Pid > 0 && Pid != ::getpid() && ::kill(Pid, 0) == 0)
    return "left " + Path.str() + " alone: kloop process " + std::to_string(Pid) + " is still writing";
  enum State { Old, New, Changed };
  std::vector<State> St;
  bool Forward = true;
  for (const Entry &E : Entries) {
    std::string H = hashOfFile(E.Target);
    St.push_back(H == E.NewHash ? New : H == E.OldHash ? Old : Changed);
    Forward &= St.back() == New || (St.back() == Old && hashOfFile(E.Temp) == E.NewHash);
  }
  std::vector<std::string> Done, Left;
  for (size_t I = 0; I < Entries.size(); ++I) {
    const Entry &E = Entries[I];
    std::string Rel = relativeTo(E.Target, Dir);
    if (St[I] == Changed)
      Left.push_back(Rel);
    else if (Forward && St[I] == Old)
      Done.push_back(Rel), consumeError(commitTempFile(E.Temp, E.Target));
    else if (!Forward && St[I] == New && hashOfFile(E.Backup) == E.OldHash)
      Done.push_back(Rel), consumeError(commitTempFile(E.Backup, E.Target));
  }
  removeFiles(Entries);
  if (::unlink(Path.str().c_str()) != 0)
    return createStringError(std::error_code(errno, std::generic_category()), "cannot remove " + Path);
  consumeError(syncDirectory(Dir));
  std::string Msg = "recovered an interrupted write recorded in " + Path.str() + ": " +
                    (Forward ? "finished it (new contents" : "rolled it back (old contents") + " in every file" +
                    (Done.empty() ? "" : "; rewrote " + names(Done)) + ")";
  if (!Left.empty())
    Msg += "; left alone, changed since: " + names(Left);
  return Msg;
}

/// \p Path's directory (itself when a directory) and every directory above it.
void addDirectoriesUp(StringRef Path, std::set<std::string> &Out) {
  std::string P = absoluteOf(Path);
  std::string D = sys::fs::is_directory(P) ? P : sys::path::parent_path(P).str();
  while (!D.empty() && Out.insert(D).second)
    D = sys::path::parent_path(D).str();
}
} // namespace

Expected<std::vector<std::string>> recoverInterruptedWrites(ArrayRef<std::string> Paths) {
  std::vector<std::string> Notes;
  std::set<std::string> Dirs, Near;
  for (const std::string &P : Paths) {
    addDirectoriesUp(P, Dirs);
    std::string A = absoluteOf(P);
    Near.insert(sys::fs::is_directory(A) ? A : sys::path::parent_path(A).str());
  }
  for (const std::string &D : Dirs) {
    SmallString<256> M(D);
    sys::path::append(M, IntentManifestName);
    if (!sys::fs::exists(M))
      continue;
    int Pid = 0;
    if (Expected<std::vector<Entry>> Es = readManifest(M, D, Pid))
      for (const Entry &E : *Es)
        Near.insert(sys::path::parent_path(E.Target).str());
    else
      consumeError(Es.takeError()); // recoverManifest reports it
    Expected<std::string> Note = recoverManifest(M);
    if (!Note)
      return Note.takeError();
    Notes.push_back(*Note);
  }
  for (const std::string &D : Near)
    for (const std::string &R : removeStrayTempFiles(D))
      Notes.push_back("removed " + R + ", left by a kloop process that no longer exists");
  return Notes;
}

} // namespace kloop
