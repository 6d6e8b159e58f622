#include "psi_trigger.h"

#include <fcntl.h>
#include <poll.h>
#include <unistd.h>

#include <cerrno>
#include <string>

#include "errors.h"

namespace sb {

void PsiTrigger::Init(Napi::Env env, Napi::Object exports) {
  Napi::Function cls = DefineClass(
      env, "PsiTrigger",
      {InstanceMethod<&PsiTrigger::Close>("close"), InstanceMethod<&PsiTrigger::Ref>("ref"),
       InstanceMethod<&PsiTrigger::Unref>("unref"), InstanceAccessor<&PsiTrigger::GetFd>("fd")});
  exports.Set("PsiTrigger", cls);
}

// new PsiTrigger(path, spec, cb): spec is the trigger line ("full 100000 2000000");
// cb("fired") on each POLLPRI, cb("gone") once on POLLERR, after which the trigger is spent.
// The kernel validates the spec; its EINVAL comes back as an Error with syscall "write".
PsiTrigger::PsiTrigger(const Napi::CallbackInfo& info) : Napi::ObjectWrap<PsiTrigger>(info) {
  Napi::Env env = info.Env();
  if (info.Length() < 3 || !info[0].IsString() || !info[1].IsString() || !info[2].IsFunction()) {
    ThrowArgError(env, "PsiTrigger(path, spec, cb): expected (string, string, function)");
  }
  std::string path = info[0].As<Napi::String>();
  std::string spec = info[1].As<Napi::String>();
  fd_ = ::open(path.c_str(), O_RDWR | O_NONBLOCK | O_CLOEXEC);
  if (fd_ < 0) throw ErrnoError(env, "open", errno, path);
  // The kernel reads the spec as a C string: send its terminating NUL too.
  if (RetryOnEintr([&] { return ::write(fd_, spec.c_str(), spec.size() + 1); }) < 0) {
    int err = errno;
    Release();
    throw ErrnoError(env, "write", err, path);
  }
  callback_ = Napi::Persistent(info[2].As<Napi::Function>());
  try {
    poll_ = PollHandle::Start(env, fd_, UV_PRIORITIZED, [this, env](int status, int) {
      Napi::HandleScope scope(env);  // we are called from libuv: no JS scope is open
      // A destroyed trigger (its cgroup removed) polls as POLLERR|POLLPRI, which libuv reports
      // as a plain priority event (that pair is how kernfs says "changed"), and the kernel
      // wakes us only once for it. So ask the fd itself: a live trigger never has POLLERR.
      struct pollfd p = {fd_, POLLPRI, 0};
      bool dead = status < 0 || (RetryOnEintr([&] { return ::poll(&p, 1, 0); }) > 0 && (p.revents & (POLLERR | POLLNVAL)) != 0);
      if (dead) {
        Napi::FunctionReference cb = std::move(callback_);
        Release();
        Napi::String kind = Napi::String::New(env, "gone");
        CallFromLoop(env, cb, {kind});
        return;
      }
      CallFromLoop(env, callback_, {Napi::String::New(env, "fired")});
    });
  } catch (...) {
    Release();
    throw;
  }
}

PsiTrigger::~PsiTrigger() { Release(); }

void PsiTrigger::Release() {
  if (poll_ != nullptr) {
    poll_->Close();
    poll_ = nullptr;
  }
  if (fd_ >= 0) {
    ::close(fd_);  // closing the fd destroys the kernel's trigger
    fd_ = -1;
  }
  callback_.Reset();
}

Napi::Value PsiTrigger::Close(const Napi::CallbackInfo& info) {
  Release();
  return info.Env().Undefined();
}

Napi::Value PsiTrigger::Ref(const Napi::CallbackInfo& info) {
  if (poll_ != nullptr) poll_->Ref();
  return info.Env().Undefined();
}

Napi::Value PsiTrigger::Unref(const Napi::CallbackInfo& info) {
  if (poll_ != nullptr) poll_->Unref();
  return info.Env().Undefined();
}

Napi::Value PsiTrigger::GetFd(const Napi::CallbackInfo& info) { return Napi::Number::New(info.Env(), fd_); }

}  // namespace sb
