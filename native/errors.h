// Errors that name the failing syscall and the errno, in the style of @parcel/watcher:
// every Error thrown to JS carries `code` (errno name), `errno`, `syscall` and, when a file
// is involved, `path`.
#pragma once
#include <napi.h>
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

}  // namespace sb
