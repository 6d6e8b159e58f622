// A PSI trigger (Documentation/accounting/psi.rst): "<some|full> <stall us> <window us>"
// written to a pressure file; POLLPRI when the stall threshold is crossed within a window,
// POLLERR when the cgroup behind the file is gone.
#pragma once
#include <napi.h>

#include "poll_handle.h"

namespace sb {

class PsiTrigger : public Napi::ObjectWrap<PsiTrigger> {
 public:
  static void Init(Napi::Env env, Napi::Object exports);
  explicit PsiTrigger(const Napi::CallbackInfo& info);
  ~PsiTrigger() override;

 private:
  Napi::Value Close(const Napi::CallbackInfo& info);
  Napi::Value Ref(const Napi::CallbackInfo& info);
  Napi::Value Unref(const Napi::CallbackInfo& info);
  Napi::Value GetFd(const Napi::CallbackInfo& info);
  void Release();

  int fd_ = -1;
  PollHandle* poll_ = nullptr;
  Napi::FunctionReference callback_;
};

}  // namespace sb
