//===- Path.cpp - Paths as kloop compares them ------------------------------===//
#include "kloop/Support/Path.h"

#include "llvm/ADT/SmallString.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"

using namespace llvm;

namespace kloop {

std::string absolutePath(StringRef P, StringRef Base) {
  SmallString<256> Abs(P);
  if (!sys::path::is_absolute(Abs)) {
    if (!Base.empty()) {
      Abs = Base;
      sys::path::append(Abs, P);
    } else {
      sys::fs::make_absolute(Abs);
    }
  }
  sys::path::remove_dots(Abs, true);
  return std::string(Abs);
}

std::string installPrefix(const char *Argv0, void *MainAddr) {
  std::string Exe = sys::fs::getMainExecutable(Argv0, MainAddr);
  if (Exe.empty())
    return "";
  return std::string(sys::path::parent_path(sys::path::parent_path(Exe)));
}

std::string relativePath(StringRef P, StringRef Root) {
  if (Root.empty())
    return P.str();
  SmallString<256> R(Root);
  if (!R.ends_with("/"))
    R += "/";
  if (P.starts_with(R))
    return P.substr(R.size()).str();
  return P.str();
}

bool isAtOrBelow(StringRef P, StringRef Dir) {
  Dir = Dir.rtrim('/');
  return P.consume_front(Dir) && (P.empty() || P.starts_with("/"));
}

} // namespace kloop
