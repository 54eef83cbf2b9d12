//===- Series.cpp - Accepted changes as a patch series, fixes and a write ---===//
#include "kloop/Codebase/Codebase.h"
#include "kloop/Support/Error.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"

#include <cstdio>
#include <set>

using llvm::Expected;
using llvm::StringRef;

namespace kloop {
namespace codebase {

std::string numberPatch(StringRef Patch, unsigned Index, unsigned Total, StringRef KernelId, StringRef Extra) {
  std::string Out = Patch.str();
  const std::string Tag = "Subject: [PATCH] kloop: ";
  if (size_t At = Out.find(Tag); At != std::string::npos)
    Out.replace(At, Tag.size(), llvm::formatv("Subject: [PATCH {0}/{1}] kloop: {2}: ", Index, Total, KernelId).str());
  if (size_t Sep = Out.find("\n---\n"); Sep != std::string::npos && !Extra.empty())
    Out.insert(Sep + 1, "\n" + Extra.rtrim("\n").str() + "\n");
  return Out;
}

std::string patchFileName(unsigned Index, StringRef KernelId) {
  std::string Name;
  for (char C : KernelId)
    Name += llvm::isAlnum(C) || C == '-' || C == '_' ? C : '-';
  char Number[16];
  std::snprintf(Number, sizeof Number, "%04u-", Index);
  return Number + Name + ".patch";
}

check::Finding kernelFinding(StringRef KernelId, StringRef Message, const std::vector<FileChange> &Changes) {
  check::Finding F;
  F.Rule = "optimize";
  F.Kernel = KernelId.str();
  F.Message = Message.str();
  for (const FileChange &C : Changes) {
    ByteReplacement R = smallestReplacement(C.Before, C.After);
    F.Fixes.push_back({C.File, unsigned(R.Offset), unsigned(R.Length), R.Text});
  }
  if (!F.Fixes.empty()) {
    F.File = F.Fixes.front().File;
    F.Offset = F.Fixes.front().Offset;
  }
  return F;
}

Expected<std::vector<FileChange>> kernelChanges(StringRef Root, StringRef BaselineDir, StringRef FinalDir,
                                                const std::vector<std::string> &Sources) {
  std::vector<FileChange> Out;
  for (const std::string &S : Sources) {
    auto Before = llvm::MemoryBuffer::getFile(BaselineDir + "/" + S);
    auto After = llvm::MemoryBuffer::getFile(FinalDir + "/" + S);
    if (!Before || !After)
      return makeError("cannot read " + (Before ? FinalDir : BaselineDir) + "/" + S + ": " +
                       (Before ? After.getError() : Before.getError()).message());
    if ((*Before)->getBuffer() == (*After)->getBuffer())
      continue;
    Out.push_back({(Root + "/" + S).str(), S, (*Before)->getBuffer().str(), (*After)->getBuffer().str()});
  }
  return Out;
}

llvm::Error applyAll(const std::vector<FileChange> &Changes) {
  std::set<std::string> Seen;
  for (const FileChange &C : Changes) {
    if (!Seen.insert(C.File).second)
      return makeError("--fix: two patches of the series change " + C.File + "; nothing was written");
    auto Now = llvm::MemoryBuffer::getFile(C.File);
    if (!Now)
      return makeError("--fix: cannot read " + C.File + ": " + Now.getError().message() + "; nothing was written");
    if ((*Now)->getBuffer() != C.Before)
      return makeError("--fix: " + C.File +
                       " changed since kloop optimize copied it, so its patch does not apply; nothing was written");
  }
  if (llvm::Error E = writeChangesInPlace(Changes))
    return makeError("--fix: " + llvm::toString(std::move(E)) + "; nothing was written");
  return llvm::Error::success();
}

} // namespace codebase
} // namespace kloop
