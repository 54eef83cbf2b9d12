//===- AtomicFile.cpp - The one writer of kloop's outputs -----------------===//
#include "kloop/Support/AtomicFile.h"

#include "llvm/ADT/SmallString.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"

#include <cerrno>
#include <csignal>
#include <fcntl.h>
#include <mutex>
#include <random>
#include <sys/stat.h>
#include <unistd.h>

using namespace llvm;

namespace kloop {

FileSink::~FileSink() = default;
ssize_t FileSink::write(int FD, const char *Data, size_t Size) { return ::write(FD, Data, Size); }
int FileSink::fsync(int FD) { return ::fsync(FD); }
int FileSink::close(int FD) { return ::close(FD); }

FileSink &systemFileSink() {
  static FileSink S;
  return S;
}

namespace {
Error errnoError(int Errno, const Twine &What) {
  std::error_code EC(Errno, std::generic_category());
  return createStringError(EC, What + ": " + EC.message());
}

std::string directoryOf(StringRef Path) {
  StringRef D = sys::path::parent_path(Path);
  return D.empty() ? std::string(".") : D.str();
}

/// Writes all of \p Data, retrying short writes and EINTR.
int writeAll(FileSink &Sink, int FD, StringRef Data) {
  while (!Data.empty()) {
    ssize_t N = Sink.write(FD, Data.data(), Data.size());
    if (N < 0 && errno == EINTR)
      continue;
    if (N <= 0)
      return N < 0 ? errno : EIO;
    Data = Data.drop_front(static_cast<size_t>(N));
  }
  return 0;
}

/// Mode of the new file: \p Opts.Mode, else the target's; none for a new file (0666 less the umask).
std::optional<unsigned> modeFor(StringRef Target, const AtomicWriteOptions &Opts) {
  if (Opts.Mode)
    return Opts.Mode;
  struct stat St;
  if (::stat(Target.str().c_str(), &St) == 0)
    return St.st_mode & 07777;
  return std::nullopt;
}

/// Creates \p Path exclusively with \p Mode; -1 with errno on failure.
int createExclusive(const std::string &Path, std::optional<unsigned> Mode) {
  int FD;
  do
    FD = ::open(Path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
  while (FD < 0 && errno == EINTR);
  if (FD >= 0 && Mode && ::fchmod(FD, *Mode) != 0) {
    int Saved = errno;
    ::close(FD);
    ::unlink(Path.c_str());
    errno = Saved;
    return -1;
  }
  return FD;
}
} // namespace

std::string siblingFileName(StringRef Target, StringRef Kind, int Pid) {
  static std::mutex Lock;
  static std::mt19937_64 Rng{std::random_device{}()};
  static const char Alnum[] = "abcdefghijklmnopqrstuvwxyz0123456789";
  for (;;) {
    std::string Suffix;
    {
      std::lock_guard<std::mutex> G(Lock);
      for (int I = 0; I < 8; ++I)
        Suffix += Alnum[Rng() % 36];
    }
    std::string P = (Target + ".kloop-" + Kind + "." + Twine(Pid) + "." + Suffix).str();
    if (!sys::fs::exists(P))
      return P;
  }
}

Expected<std::string> resolveWriteTarget(StringRef Path) {
  sys::fs::file_status St;
  if (sys::fs::status(Path, St, /*follow=*/false) || St.type() != sys::fs::file_type::symlink_file)
    return Path.str();
  SmallString<256> Real;
  if (std::error_code EC = sys::fs::real_path(Path, Real))
    return createStringError(EC, "cannot write " + Path + ": it is a symbolic link that cannot be followed: " +
                                     EC.message());
  return std::string(Real);
}

Expected<std::string> writeTempFileNextTo(StringRef Target, StringRef Contents, const AtomicWriteOptions &Opts) {
  FileSink &Sink = Opts.Sink ? *Opts.Sink : systemFileSink();
  std::string Temp = siblingFileName(Target, "tmp", static_cast<int>(::getpid()));
  int FD = createExclusive(Temp, modeFor(Target, Opts));
  if (FD < 0)
    return errnoError(errno, "cannot write " + Target + " (temporary file " + Temp + ")");
  int Err = writeAll(Sink, FD, Contents);
  if (!Err && Sink.fsync(FD) != 0)
    Err = errno;
  if (Sink.close(FD) != 0 && !Err)
    Err = errno;
  if (Err) {
    ::unlink(Temp.c_str());
    return errnoError(Err, "cannot write " + Target);
  }
  return Temp;
}

Error syncDirectory(StringRef Dir) {
  int FD = ::open(Dir.str().c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (FD < 0)
    return errnoError(errno, "cannot sync directory " + Dir);
  int Err = ::fsync(FD) == 0 ? 0 : errno;
  ::close(FD);
  // Some file systems cannot fsync a directory (EINVAL); the rename itself is still atomic there.
  if (Err && Err != EINVAL)
    return errnoError(Err, "cannot sync directory " + Dir);
  return Error::success();
}

Error commitTempFile(StringRef Temp, StringRef Target) {
  if (::rename(Temp.str().c_str(), Target.str().c_str()) != 0)
    return errnoError(errno, "cannot write " + Target + " (rename of " + Temp + ")");
  return syncDirectory(directoryOf(Target));
}

Error writeFileAtomically(StringRef Path, StringRef Contents, const AtomicWriteOptions &Opts) {
  Expected<std::string> Target = resolveWriteTarget(Path);
  if (!Target)
    return Target.takeError();
  Expected<std::string> Temp = writeTempFileNextTo(*Target, Contents, Opts);
  if (!Temp)
    return Temp.takeError();
  if (Error E = commitTempFile(*Temp, *Target)) {
    ::unlink(Temp->c_str());
    return E;
  }
  return Error::success();
}

bool isStrayTempFile(StringRef Path) {
  StringRef Name = sys::path::filename(Path);
  size_t At = Name.rfind(".kloop-");
  if (At == StringRef::npos)
    return false;
  SmallVector<StringRef, 4> Parts;
  Name.substr(At + 7).split(Parts, '.');
  if (Parts.size() != 3 || (Parts[0] != "tmp" && Parts[0] != "bak") || Parts[2].size() != 8)
    return false;
  int Pid = 0;
  if (Parts[1].getAsInteger(10, Pid) || Pid <= 0)
    return false;
  return ::kill(Pid, 0) != 0 && errno == ESRCH;
}

std::vector<std::string> removeStrayTempFiles(StringRef Dir) {
  std::vector<std::string> Removed;
  std::error_code EC;
  for (sys::fs::directory_iterator It(Dir, EC), End; It != End && !EC; It.increment(EC))
    if (isStrayTempFile(It->path()) && !sys::fs::remove(It->path()))
      Removed.push_back(It->path());
  return Removed;
}

} // namespace kloop
