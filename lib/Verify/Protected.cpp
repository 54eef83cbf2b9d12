//===- Protected.cpp - Files a candidate must not change ------------------===//
#include "kloop/Verify/Protected.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/SHA256.h"

using namespace llvm;

namespace kloop {
namespace verify {

Expected<FileDigest> digestFile(StringRef Path) {
  auto Buf = MemoryBuffer::getFile(Path, /*IsText=*/false,
                                   /*RequiresNullTerminator=*/false);
  if (!Buf)
    return createStringError(Buf.getError(),
                             "cannot read protected file %s: %s",
                             Path.str().c_str(),
                             Buf.getError().message().c_str());
  FileDigest D;
  D.Path = Path.str();
  D.Exists = true;
  StringRef Data = (*Buf)->getBuffer();
  auto Hash = SHA256::hash(ArrayRef<uint8_t>(Data.bytes_begin(), Data.size()));
  D.Sha256 = toHex(Hash, /*LowerCase=*/true);
  return D;
}

Expected<std::vector<FileDigest>> digestFiles(ArrayRef<std::string> Paths) {
  std::vector<FileDigest> Out;
  for (const std::string &P : Paths) {
    auto D = digestFile(P);
    if (!D)
      return D.takeError();
    Out.push_back(std::move(*D));
  }
  return Out;
}

static std::string shortHash(StringRef H) {
  return H.empty() ? std::string("none") : H.take_front(12).str() + "..";
}

std::vector<ProtectedChange> diffDigests(ArrayRef<FileDigest> Before,
                                         ArrayRef<FileDigest> After) {
  std::vector<ProtectedChange> Out;
  for (const FileDigest &B : Before) {
    const FileDigest *A = nullptr;
    for (const FileDigest &X : After)
      if (X.Path == B.Path)
        A = &X;
    bool Gone = !A || !A->Exists;
    if (!Gone && A->Sha256 == B.Sha256 && B.Exists)
      continue;
    if (Gone && !B.Exists)
      continue;
    ProtectedChange C;
    C.Path = B.Path;
    C.Before = B.Sha256;
    C.After = Gone ? std::string() : A->Sha256;
    if (Gone)
      C.Message = formatv("protected file {0} was deleted", B.Path).str();
    else if (!B.Exists)
      C.Message = formatv("protected file {0} was created", B.Path).str();
    else
      C.Message = formatv("protected file {0} was modified (sha256 {1} -> {2})",
                          B.Path, shortHash(C.Before), shortHash(C.After))
                      .str();
    Out.push_back(std::move(C));
  }
  return Out;
}

Expected<std::vector<ProtectedChange>>
checkProtectedFiles(ArrayRef<FileDigest> Before) {
  std::vector<FileDigest> Now;
  for (const FileDigest &B : Before) {
    if (!sys::fs::exists(B.Path)) {
      FileDigest D;
      D.Path = B.Path;
      D.Exists = false;
      Now.push_back(std::move(D));
      continue;
    }
    auto D = digestFile(B.Path);
    if (!D)
      return D.takeError();
    Now.push_back(std::move(*D));
  }
  return diffDigests(Before, Now);
}

} // namespace verify
} // namespace kloop
