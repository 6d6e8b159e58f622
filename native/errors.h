// Errors that name the failing syscall and the errno, in the style of @parcel/watcher:
// every Error thrown to JS carries `code` (errno name), `errno`, `syscall` and, when a file
// is involved, `path`.
#pragma once
#include <napi.h>

#include <cerrno>
#include <string>

namespace sb {

// Build (not throw) an Error for `syscall` failing with `err` (a positive errno).
Napi::Error ErrnoError(Napi::Env env, const char* syscall, int err,
                       const std::string& path = std::string());

// Throw a TypeError for a bad argument; `what` says what was expected.
[[noreturn]] void ThrowArgError(Napi::Env env, const std::string& what);

// Call a JS callback from a libuv callback. Values passed in `args` must have been made inside
// a Napi::HandleScope opened by the caller (a libuv callback has none). Exceptions thrown by the callback are
// surfaced as uncaught exceptions (napi_fatal_exception), never swallowed.
void CallFromLoop(Napi::Env env, const Napi::FunctionReference& fn,
                  const std::initializer_list<napi_value>& args);

// Run a syscall again for as long as a signal interrupts it (-1 with EINTR). A signal that has a
// handler ends poll(2) and a blocking send or read with EINTR whatever SA_RESTART says
// (signal(7)); node --cpu-prof sends the main thread SIGPROF a thousand times a second, and a
// profiled sbd died of "poll: Interrupted system call" (issue 15, session 26).
template <typename Call>
auto RetryOnEintr(Call&& call) -> decltype(call()) {
  decltype(call()) rc;
  do rc = call();
  while (rc < 0 && errno == EINTR);
  return rc;
}

}  // namespace sb
