#include "pidfd.h"

#include <poll.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>

#include "errors.h"

// Syscall numbers are fixed per architecture; older libc headers may lack the names.
#ifndef SYS_pidfd_open
#define SYS_pidfd_open 434
#endif
#ifndef SYS_pidfd_send_signal
#define SYS_pidfd_send_signal 424
#endif
#ifndef SYS_process_mrelease
#define SYS_process_mrelease 448
#endif

namespace sb {

void Pidfd::Init(Napi::Env env, Napi::Object exports) {
  Napi::Function cls = DefineClass(
      env, "Pidfd",
      {InstanceMethod<&Pidfd::Signal>("signal"),
       InstanceMethod<&Pidfd::WatchExit>("watchExit"),
       InstanceMethod<&Pidfd::HasExited>("hasExited"),
       InstanceMethod<&Pidfd::Mrelease>("mrelease"),
       InstanceMethod<&Pidfd::Close>("close"),
       InstanceMethod<&Pidfd::Ref>("ref"),
       InstanceMethod<&Pidfd::Unref>("unref"),
       InstanceAccessor<&Pidfd::GetFd>("fd"),
       InstanceAccessor<&Pidfd::GetPid>("pid")});
  exports.Set("Pidfd", cls);
}

// new Pidfd(pid): pidfd_open(pid, 0).
Pidfd::Pidfd(const Napi::CallbackInfo& info) : Napi::ObjectWrap<Pidfd>(info) {
  Napi::Env env = info.Env();
  if (info.Length() < 1 || !info[0].IsNumber()) ThrowArgError(env, "Pidfd(pid): pid must be a number");
  double pid = info[0].As<Napi::Number>().DoubleValue();
  if (pid < 1 || pid > 4194304 || pid != static_cast<int>(pid)) {
    ThrowArgError(env, "Pidfd(pid): pid must be an integer from 1 to 4194304");
  }
  pid_ = static_cast<int>(pid);
  long fd = syscall(SYS_pidfd_open, pid_, 0);
  if (fd < 0) throw ErrnoError(env, "pidfd_open", errno);
  fd_ = static_cast<int>(fd);
}

Pidfd::~Pidfd() { Release(); }

void Pidfd::Release() {
  if (poll_ != nullptr) {
    poll_->Close();
    poll_ = nullptr;
  }
  if (fd_ >= 0) {
    ::close(fd_);
    fd_ = -1;
  }
  on_exit_.Reset();
}

int Pidfd::OpenFdOrThrow(Napi::Env env, const char* syscall) const {
  if (fd_ < 0) throw ErrnoError(env, syscall, EBADF);
  return fd_;
}

// signal(signo): pidfd_send_signal(fd, signo, NULL, 0). ESRCH once the process is gone,
// whatever process holds its old pid number now.
Napi::Value Pidfd::Signal(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  if (info.Length() < 1 || !info[0].IsNumber()) ThrowArgError(env, "signal(signo): signo must be a number");
  int sig = info[0].As<Napi::Number>().Int32Value();
  if (sig < 0 || sig >= NSIG) ThrowArgError(env, "signal(signo): signo out of range");
  int fd = OpenFdOrThrow(env, "pidfd_send_signal");
  if (syscall(SYS_pidfd_send_signal, fd, sig, nullptr, 0) != 0) {
    throw ErrnoError(env, "pidfd_send_signal", errno);
  }
  return env.Undefined();
}

// watchExit(cb): cb() once, when the process exits (the pidfd turns readable).
Napi::Value Pidfd::WatchExit(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  if (info.Length() < 1 || !info[0].IsFunction()) ThrowArgError(env, "watchExit(cb): cb must be a function");
  int fd = OpenFdOrThrow(env, "uv_poll_start");
  if (poll_ != nullptr) throw Napi::Error::New(env, "watchExit: already watching this process");
  on_exit_ = Napi::Persistent(info[0].As<Napi::Function>());
  poll_ = PollHandle::Start(env, fd, UV_READABLE, [this, env](int, int) {
    // Readable (or an error on the fd, which can only mean the same): fire once.
    poll_->Close();
    poll_ = nullptr;
    Napi::FunctionReference cb = std::move(on_exit_);
    CallFromLoop(env, cb, {});
  });
  return env.Undefined();
}

// hasExited(): a non-blocking poll of the pidfd.
Napi::Value Pidfd::HasExited(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  struct pollfd p = {OpenFdOrThrow(env, "poll"), POLLIN, 0};
  int rc = RetryOnEintr([&] { return ::poll(&p, 1, 0); });
  if (rc < 0) throw ErrnoError(env, "poll", errno);
  return Napi::Boolean::New(env, rc > 0);
}

// mrelease(): process_mrelease(fd, 0), after a SIGKILL, frees the victim's memory at once.
Napi::Value Pidfd::Mrelease(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  int fd = OpenFdOrThrow(env, "process_mrelease");
  if (syscall(SYS_process_mrelease, fd, 0) != 0) throw ErrnoError(env, "process_mrelease", errno);
  return env.Undefined();
}

Napi::Value Pidfd::Close(const Napi::CallbackInfo& info) {
  Release();
  return info.Env().Undefined();
}

Napi::Value Pidfd::Ref(const Napi::CallbackInfo& info) {
  if (poll_ != nullptr) poll_->Ref();
  return info.Env().Undefined();
}

Napi::Value Pidfd::Unref(const Napi::CallbackInfo& info) {
  if (poll_ != nullptr) poll_->Unref();
  return info.Env().Undefined();
}

Napi::Value Pidfd::GetFd(const Napi::CallbackInfo& info) { return Napi::Number::New(info.Env(), fd_); }
Napi::Value Pidfd::GetPid(const Napi::CallbackInfo& info) { return Napi::Number::New(info.Env(), pid_); }

}  // namespace sb
