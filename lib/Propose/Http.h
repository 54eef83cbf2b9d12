//===- Http.h - Minimal libcurl POST for the LLM proposer (private) -------===//
#ifndef KLOOP_LIB_PROPOSE_HTTP_H
#define KLOOP_LIB_PROPOSE_HTTP_H

#include "llvm/Support/Error.h"

#include <optional>
#include <variant>
#include <string>
#include <vector>

namespace kloop {
namespace http {

/// One POST request.
struct Request {
  std::string URL;
  /// "Name: value" lines; may hold secrets, so they are never logged.
  std::vector<std::string> Headers;
  std::string Body;
  long ConnectTimeoutMs = 10000;
  long TotalTimeoutMs = 300000;
};

/// A complete HTTP response (any status).
struct Response {
  long Status = 0;
  std::string Body;
  /// The Retry-After header's value, if sent.
  std::optional<std::string> RetryAfter;
};

/// Why no complete response arrived.
struct TransportFailure {
  /// The total timeout passed after the connection was established (the
  /// server got the request); a connect timeout is not TimedOut.
  bool TimedOut = false;
  std::string Reason;    ///< curl's description, e.g. "transfer closed with 20 bytes remaining to read"
};

/// Sends \p R. Returns the response, or the transport failure.
/// Never prints. Thread-compatible (one easy handle per call).
std::variant<Response, TransportFailure> post(const Request &R);

} // namespace http
} // namespace kloop

#endif
