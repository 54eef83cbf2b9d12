//===- ProcessTest.cpp - Process groups are killed and reaped whole -------===//
#include "kloop/Support/Process.h"
#include "TestFiles.h"
#include "gtest/gtest.h"

#include <algorithm>
#include <chrono>
#include <fstream>
#include <sstream>
#include <sys/wait.h>
#include <unistd.h>

using namespace kloop;

namespace {

/// The pid written to \p File, waiting up to 5 s for it to appear; 0 if none.
int readPid(const std::string &File) {
  for (int I = 0; I < 500; ++I) {
    std::ifstream In(File);
    int Pid = 0;
    if (In >> Pid && Pid > 0)
      return Pid;
    usleep(10000);
  }
  return 0;
}

/// "state ppid" of \p Pid from /proc/<pid>/stat, or "" when it does not exist (reaped).
std::string stateAndParent(int Pid) {
  std::ifstream Stat("/proc/" + std::to_string(Pid) + "/stat");
  std::string Line;
  if (!std::getline(Stat, Line))
    return "";
  size_t Close = Line.rfind(')');
  std::istringstream Rest(Line.substr(Close + 1));
  std::string State, Parent;
  Rest >> State >> Parent;
  return State + " " + Parent;
}

/// Zombie children of this test process, from /proc.
std::vector<pid_t> zombieChildren() {
  std::vector<pid_t> Z;
  std::error_code EC;
  for (llvm::sys::fs::directory_iterator It("/proc", EC), End; It != End && !EC; It.increment(EC)) {
    int Pid = 0;
    if (llvm::StringRef(llvm::sys::path::filename(It->path())).getAsInteger(10, Pid))
      continue;
    if (stateAndParent(Pid) == "Z " + std::to_string(getpid()))
      Z.push_back(Pid);
  }
  return Z;
}

// Issue 17, item 1: the workload's shell is killed with its group; the workload it started is
// orphaned. PID 1 of the GPU machine (and of this one) never reaps orphans, so before kloop became a
// child subreaper and reaped the group, the killed child stayed <defunct> for ever, in the group.
TEST(ReapProcessGroup, LeavesNoProcessOfTheGroupAndNoZombie) {
  testfiles::TempDir Dir("kloop-reap");
  std::string PidFile = Dir.file("child.pid");
  SpawnSpec S;
  // The shell backgrounds a child and waits: killing the group orphans the child (its shell dies).
  S.Argv = {"/bin/sh", "-c", "sleep 30 & echo $! > '" + PidFile + "'; wait"};
  llvm::Expected<pid_t> Leader = spawnProcessGroup(S);
  ASSERT_TRUE(bool(Leader)) << llvm::toString(Leader.takeError());
  int Child = readPid(PidFile);
  ASSERT_GT(Child, 0);
  ASSERT_NE(stateAndParent(Child), "");
  // The runners' path: kill the group, wait for the leader (its status), then reap the rest.
  killProcessGroup(*Leader);
  int Status = 0;
  ASSERT_EQ(waitpid(*Leader, &Status, 0), *Leader);
  EXPECT_TRUE(WIFSIGNALED(Status));
  auto T0 = std::chrono::steady_clock::now();
  ReapResult R = reapProcessGroup(*Leader, std::chrono::milliseconds(5000));
  double Took = std::chrono::duration<double>(std::chrono::steady_clock::now() - T0).count();
  // R.Reaped is not checked: the shell may reap its child, and the supervisor the shell, before
  // SIGKILL ends them; whatever is left is kloop's to reap.
  EXPECT_TRUE(R.Left.empty());
  EXPECT_LT(Took, 4.0);
  EXPECT_EQ(stateAndParent(Child), "") << "the orphaned child is still there (zombie of PID 1?)";
  EXPECT_TRUE(processGroupMembers(*Leader).empty());
  EXPECT_TRUE(zombieChildren().empty());
}

// The leader itself is reaped too when nobody waited for it, and a group already gone is harmless.
TEST(ReapProcessGroup, ReapsTheLeaderAndIsHarmlessTwice) {
  SpawnSpec S;
  S.Argv = {"/bin/sh", "-c", "sleep 30"};
  llvm::Expected<pid_t> Leader = spawnProcessGroup(S);
  ASSERT_TRUE(bool(Leader)) << llvm::toString(Leader.takeError());
  ReapResult R = reapProcessGroup(*Leader, std::chrono::milliseconds(5000));
  EXPECT_GE(R.Reaped, 1u);
  EXPECT_TRUE(R.Left.empty());
  EXPECT_EQ(stateAndParent(*Leader), "");
  ReapResult Again = reapProcessGroup(*Leader, std::chrono::milliseconds(100));
  EXPECT_EQ(Again.Reaped, 0u);
  EXPECT_TRUE(Again.Left.empty());
}

// processGroupMembers finds every process of a live group (the messages about unreaped processes
// and the test above rely on it).
TEST(ProcessGroupMembers, ListsTheGroupFromProc) {
  SpawnSpec S;
  S.Argv = {"/bin/sh", "-c", "sleep 30 & sleep 30"};
  llvm::Expected<pid_t> Leader = spawnProcessGroup(S);
  ASSERT_TRUE(bool(Leader)) << llvm::toString(Leader.takeError());
  // The supervisor, the shell and the two sleeps once the shell has started both.
  std::vector<pid_t> M;
  for (int I = 0; I < 500 && (M = processGroupMembers(*Leader)).size() < 4; ++I)
    usleep(10000);
  EXPECT_EQ(M.size(), 4u);
  EXPECT_NE(std::find(M.begin(), M.end(), *Leader), M.end());
  reapProcessGroup(*Leader, std::chrono::milliseconds(5000));
  EXPECT_TRUE(processGroupMembers(*Leader).empty());
}

} // namespace
