//===- kloop/Support/Error.h - An error that is a message -------*- C++ -*-===//
///
/// \file
/// kloop's errors are messages for people (the driver prints them after the
/// command's name); they carry no error code of their own.
///
//===----------------------------------------------------------------------===//
#ifndef KLOOP_SUPPORT_ERROR_H
#define KLOOP_SUPPORT_ERROR_H

#include "llvm/ADT/Twine.h"
#include "llvm/Support/Error.h"

namespace kloop {

/// An llvm::Error whose message is \p Msg (llvm::inconvertibleErrorCode()).
inline llvm::Error makeError(const llvm::Twine &Msg) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), Msg);
}

} // namespace kloop

#endif
