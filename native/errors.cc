#include "errors.h"

#include <uv.h>

#include <cstring>

namespace sb {

Napi::Error ErrnoError(Napi::Env env, const char* syscall, int err, const std::string& path) {
  const char* name = uv_err_name(-err);  // libuv names every Linux errno ("ENOENT", ...)
  std::string msg = std::string(syscall);
  if (!path.empty()) msg += " " + path;
  msg += ": " + std::string(std::strerror(err)) + " (" + name + ")";
  Napi::Error e = Napi::Error::New(env, msg);
  e.Set("code", Napi::String::New(env, name));
  e.Set("errno", Napi::Number::New(env, err));
  e.Set("syscall", Napi::String::New(env, syscall));
  if (!path.empty()) e.Set("path", Napi::String::New(env, path));
  return e;
}

void ThrowArgError(Napi::Env env, const std::string& what) {
  throw Napi::TypeError::New(env, what);
}

void CallFromLoop(Napi::Env env, const Napi::FunctionReference& fn,
                  const std::initializer_list<napi_value>& args) {
  Napi::HandleScope scope(env);
  try {
    // MakeCallback (not Call): runs the microtask and nextTick queues afterwards, as a
    // callback from the event loop must.
    fn.MakeCallback(env.Global(), args);
  } catch (const Napi::Error& e) {
    napi_fatal_exception(env, e.Value());
  }
}

}  // namespace sb
