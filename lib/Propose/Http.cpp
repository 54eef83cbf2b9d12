//===- Http.cpp - Minimal libcurl POST for the LLM proposer ---------------===//
#include "Http.h"

#include "llvm/ADT/StringRef.h"

#include <curl/curl.h>
#include <mutex>

namespace kloop {
namespace http {

static size_t onBody(char *Data, size_t Size, size_t N, void *User) {
  static_cast<std::string *>(User)->append(Data, Size * N);
  return Size * N;
}

static size_t onHeader(char *Data, size_t Size, size_t N, void *User) {
  llvm::StringRef Line(Data, Size * N);
  auto [Name, Value] = Line.split(':');
  if (Name.trim().equals_insensitive("retry-after"))
    *static_cast<std::optional<std::string> *>(User) = Value.trim().str();
  return Size * N;
}

std::variant<Response, TransportFailure> post(const Request &R) {
  static std::once_flag Once;
  std::call_once(Once, [] { curl_global_init(CURL_GLOBAL_DEFAULT); });

  CURL *C = curl_easy_init();
  if (!C)
    return TransportFailure{false, "curl_easy_init failed"};
  Response Resp;
  char ErrBuf[CURL_ERROR_SIZE] = {0};
  curl_slist *Headers = nullptr;
  for (const std::string &H : R.Headers)
    Headers = curl_slist_append(Headers, H.c_str());
  curl_easy_setopt(C, CURLOPT_URL, R.URL.c_str());
  curl_easy_setopt(C, CURLOPT_POST, 1L);
  curl_easy_setopt(C, CURLOPT_POSTFIELDS, R.Body.data());
  curl_easy_setopt(C, CURLOPT_POSTFIELDSIZE_LARGE, static_cast<curl_off_t>(R.Body.size()));
  curl_easy_setopt(C, CURLOPT_HTTPHEADER, Headers);
  curl_easy_setopt(C, CURLOPT_WRITEFUNCTION, onBody);
  curl_easy_setopt(C, CURLOPT_WRITEDATA, &Resp.Body);
  curl_easy_setopt(C, CURLOPT_HEADERFUNCTION, onHeader);
  curl_easy_setopt(C, CURLOPT_HEADERDATA, &Resp.RetryAfter);
  curl_easy_setopt(C, CURLOPT_CONNECTTIMEOUT_MS, R.ConnectTimeoutMs);
  curl_easy_setopt(C, CURLOPT_TIMEOUT_MS, R.TotalTimeoutMs);
  curl_easy_setopt(C, CURLOPT_NOSIGNAL, 1L); // no SIGALRM in a threaded host
  curl_easy_setopt(C, CURLOPT_ERRORBUFFER, ErrBuf);
  curl_easy_setopt(C, CURLOPT_USERAGENT, "kloop/0.1");
  // Keys travel in headers: a redirect to another host must not carry them.
  curl_easy_setopt(C, CURLOPT_FOLLOWLOCATION, 0L);
  CURLcode RC = curl_easy_perform(C);
  if (RC == CURLE_OK)
    curl_easy_getinfo(C, CURLINFO_RESPONSE_CODE, &Resp.Status);
  curl_off_t ConnectUs = 0;
  curl_easy_getinfo(C, CURLINFO_CONNECT_TIME_T, &ConnectUs);
  curl_slist_free_all(Headers);
  curl_easy_cleanup(C);
  if (RC != CURLE_OK) {
    std::string Reason = ErrBuf[0] ? std::string(ErrBuf) : curl_easy_strerror(RC);
    // A timeout before the connection was up is a connect timeout: the server
    // never saw the request, so it is safe to retry; the caller only refuses
    // to retry a request the server may still be working on.
    return TransportFailure{RC == CURLE_OPERATION_TIMEDOUT && ConnectUs > 0, Reason};
  }
  return Resp;
}

} // namespace http
} // namespace kloop
