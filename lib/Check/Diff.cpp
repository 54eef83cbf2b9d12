//===- Diff.cpp - The lines a unified diff changes ------------------------===//
#include "kloop/Check/Check.h"
#include "kloop/Propose/CommandProposer.h"
#include "kloop/Support/Path.h"

#include "llvm/ADT/StringExtras.h"
#include <algorithm>

using namespace llvm;

namespace kloop {
namespace check {

bool FileChanges::touches(unsigned First, unsigned Last) const {
  for (const auto &[B, E] : Ranges)
    if (B <= Last && First <= E)
      return true;
  return false;
}

namespace {

/// The state of one unified diff being read.
struct DiffReader {
  StringRef Name;
  unsigned Strip = 1;
  StringRef BaseDir;
  std::vector<FileChanges> Out;
  FileChanges *Current = nullptr; ///< the file of the last `+++` (nullptr: none, or deleted)
  bool SawFile = false;
  unsigned OldLeft = 0, NewLeft = 0, NewLine = 0, HunkAt = 0;
  /// Lines were deleted and no line added in their place yet: the deletion
  /// touches the lines around it (marked at the next context line or the hunk's end).
  bool PendingDeletion = false;

  Error fail(unsigned LineNo, const Twine &Why) const {
    return createStringError(inconvertibleErrorCode(), Name + ":" + Twine(LineNo) + ": " + Why);
  }
  Error fileHeader(StringRef Path, unsigned LineNo);
  Error hunkHeader(StringRef Line, unsigned LineNo);
  Error bodyLine(StringRef Line, unsigned LineNo);
  void flushDeletion() {
    if (PendingDeletion)
      mark(NewLine - 1, NewLine);
    PendingDeletion = false;
  }
  void mark(unsigned First, unsigned Last) {
    if (Current)
      Current->Ranges.push_back({std::max(1u, First), std::max(1u, Last)});
  }
};

Error DiffReader::fileHeader(StringRef Path, unsigned LineNo) {
  SawFile = true;
  Path = Path.split('\t').first.rtrim(); // diff -u: "+++ file\t2024-01-01 ..."
  if (Path == "/dev/null") {
    Current = nullptr;
    return Error::success();
  }
  for (unsigned I = 0; I < Strip; ++I) {
    size_t Slash = Path.find('/');
    if (Slash == StringRef::npos)
      return fail(LineNo, "path '" + Path + "' has fewer than " + Twine(Strip) + " leading component(s) to strip");
    Path = Path.drop_front(Slash + 1);
  }
  Out.push_back({absolutePath(Path, BaseDir), {}});
  Current = &Out.back();
  return Error::success();
}

/// Reads "N" or "N,M" of a hunk header into \p Start and \p Count (1 when M is absent).
bool parseRange(StringRef Text, unsigned &Start, unsigned &Count) {
  auto [S, C] = Text.split(',');
  Count = 1;
  return !S.getAsInteger(10, Start) && (C.empty() || !C.getAsInteger(10, Count));
}

Error DiffReader::hunkHeader(StringRef Line, unsigned LineNo) {
  if (!SawFile)
    return fail(LineNo, "a hunk before any '+++ FILE' line");
  SmallVector<StringRef, 4> Parts;
  Line.split(Parts, ' ', 4, false); // "@@" "-a,b" "+c,d" "@@ ..."
  unsigned OldStart = 0, NewStart = 0;
  if (Parts.size() < 4 || Parts[0] != "@@" || !Parts[1].consume_front("-") || !Parts[2].consume_front("+") ||
      !Parts[3].starts_with("@@") || !parseRange(Parts[1], OldStart, OldLeft) ||
      !parseRange(Parts[2], NewStart, NewLeft))
    return fail(LineNo, "malformed hunk header '" + Line.take_front(80) + "' (expected '@@ -A,B +C,D @@')");
  // "+C,0": nothing added, the deleted lines lay after new line C.
  NewLine = NewLeft == 0 ? NewStart + 1 : NewStart;
  HunkAt = LineNo;
  return Error::success();
}

Error DiffReader::bodyLine(StringRef Line, unsigned LineNo) {
  char C = Line.empty() ? ' ' : Line[0]; // some tools drop the space of an empty context line
  if (C == '\\')                         // "\ No newline at end of file"
    return Error::success();
  if ((C == ' ' || C == '-') && OldLeft == 0)
    return fail(LineNo, "the hunk at line " + Twine(HunkAt) + " has more old lines than its header says");
  if ((C == ' ' || C == '+') && NewLeft == 0)
    return fail(LineNo, "the hunk at line " + Twine(HunkAt) + " has more new lines than its header says");
  if (C == ' ') {
    flushDeletion();
    --OldLeft, --NewLeft, ++NewLine;
  } else if (C == '-') {
    --OldLeft;
    PendingDeletion = true;
  } else if (C == '+') {
    --NewLeft;
    PendingDeletion = false; // the added line stands where the deleted ones were
    mark(NewLine, NewLine);
    ++NewLine;
  } else {
    return fail(LineNo, "the hunk at line " + Twine(HunkAt) + " ends early: expected ' ', '+' or '-' here, got '" +
                            Line.take_front(40) + "'");
  }
  return Error::success();
}

} // namespace

Expected<std::vector<FileChanges>> parseUnifiedDiff(StringRef Text, StringRef Name, unsigned Strip,
                                                    StringRef BaseDir) {
  DiffReader R;
  R.Name = Name;
  R.Strip = Strip;
  R.BaseDir = BaseDir;
  R.Out.reserve(std::count(Text.begin(), Text.end(), '\n') + 1); // Current points into Out
  unsigned LineNo = 0;
  bool InHunk = false;
  for (StringRef Rest = Text; !Rest.empty();) {
    auto [Line, Next] = Rest.split('\n');
    Rest = Next;
    ++LineNo;
    Line.consume_back("\r");
    Error E = Error::success();
    if (Line == "-- ") // git format-patch's signature: the diff is over
      break;
    if (InHunk)
      E = R.bodyLine(Line, LineNo);
    else if ((Line.starts_with("+") && !Line.starts_with("+++ ")) ||
             (Line.starts_with("-") && !Line.starts_with("--- ")))
      E = R.fail(LineNo, R.HunkAt ? "a '+' or '-' line after the hunk at line " + Twine(R.HunkAt) +
                                        " ended (more lines than its header says)"
                                  : Twine("a '+' or '-' line outside any hunk"));
    else if (Line.starts_with("+++ "))
      E = R.fileHeader(Line.drop_front(4), LineNo);
    else if (Line.starts_with("@@"))
      E = R.hunkHeader(Line, LineNo);
    if (E)
      return E;
    InHunk = R.OldLeft + R.NewLeft > 0;
    if (!InHunk)
      R.flushDeletion();
  }
  if (InHunk)
    return R.fail(LineNo, "the diff ends inside the hunk at line " + Twine(R.HunkAt) +
                              " (fewer lines than its header says)");
  if (!R.SawFile && !StringRef(Text).trim().empty())
    return R.fail(1, "not a unified diff: no '+++ FILE' line");
  return R.Out;
}

Expected<std::string> gitDiff(StringRef Ref, StringRef Dir) {
  CommandConfig C;
  // Explicit prefixes: diff.noprefix or diff.mnemonicPrefix in the user's configuration would change them.
  C.Argv = {"git",        "diff",       "--no-color", "--no-ext-diff", "--src-prefix=a/", "--dst-prefix=b/",
            "-U0",        "--relative", Ref.str(),    "--"};
  C.WorkingDir = Dir.str();
  C.Timeout = std::chrono::milliseconds(120000);
  C.MaxOutputBytes = 256u << 20;
  Expected<CommandResult> R = runCommand(C, "");
  if (!R)
    return R.takeError();
  if (R->ExitCode != 0)
    return createStringError(inconvertibleErrorCode(), "cannot diff against '" + Ref + "': " +
                                                           StringRef(R->Stderr).trim() +
                                                           (R->TimedOut ? " (git timed out after 120 s)" : ""));
  return std::move(R->Stdout);
}

std::vector<FileChanges> restrictTo(std::vector<FileChanges> Changes, const std::vector<std::string> &Files) {
  if (Files.empty())
    return Changes;
  llvm::erase_if(Changes, [&](const FileChanges &C) { return !llvm::is_contained(Files, C.File); });
  return Changes;
}

} // namespace check
} // namespace kloop
