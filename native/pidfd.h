// A process handle that cannot be confused with a later process of the same pid number:
// pidfd_open, pidfd_send_signal, an exit notification on the event loop, process_mrelease.
#pragma once
#include <napi.h>

#include "poll_handle.h"

namespace sb {

class Pidfd : public Napi::ObjectWrap<Pidfd> {
 public:
  static void Init(Napi::Env env, Napi::Object exports);
  explicit Pidfd(const Napi::CallbackInfo& info);
  ~Pidfd() override;

 private:
  Napi::Value Signal(const Napi::CallbackInfo& info);
  Napi::Value WatchExit(const Napi::CallbackInfo& info);
  Napi::Value HasExited(const Napi::CallbackInfo& info);
  Napi::Value Mrelease(const Napi::CallbackInfo& info);
  Napi::Value Close(const Napi::CallbackInfo& info);
  Napi::Value Ref(const Napi::CallbackInfo& info);
  Napi::Value Unref(const Napi::CallbackInfo& info);
  Napi::Value GetFd(const Napi::CallbackInfo& info);
  Napi::Value GetPid(const Napi::CallbackInfo& info);
  void Release();
  int OpenFdOrThrow(Napi::Env env, const char* syscall) const;

  int fd_ = -1;
  int pid_ = 0;
  PollHandle* poll_ = nullptr;
  Napi::FunctionReference on_exit_;
};

}  // namespace sb
