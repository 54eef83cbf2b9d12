//===- kloop.cpp - The kloop command-line tool -----------------------------===//
// Thin main: everything lives in the libraries (clang-tidy's ClangTidyMain pattern).
#include "kloop/Driver/Command.h"

int main(int argc, const char **argv) { return kloop::kloopMain(argc, argv); }
