#include "sd_notify.h"

#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstddef>
#include <cstring>
#include <string>

#include "errors.h"

namespace sb {

namespace {

// sdNotify(socketPath, payload): true once sent. A socketPath starting with "@" names an
// abstract socket. The caller decides what an unset $NOTIFY_SOCKET means (nothing is sent).
Napi::Value SdNotify(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  if (info.Length() < 2 || !info[0].IsString() || !info[1].IsString()) {
    ThrowArgError(env, "sdNotify(socketPath, payload): expected two strings");
  }
  std::string path = info[0].As<Napi::String>();
  std::string payload = info[1].As<Napi::String>();
  struct sockaddr_un addr {};
  addr.sun_family = AF_UNIX;
  if (path.empty() || path.size() >= sizeof addr.sun_path || (path[0] != '/' && path[0] != '@')) {
    throw ErrnoError(env, "connect", EINVAL, path);
  }
  std::memcpy(addr.sun_path, path.data(), path.size());
  socklen_t len = static_cast<socklen_t>(offsetof(struct sockaddr_un, sun_path) + path.size());
  if (path[0] == '@') {
    addr.sun_path[0] = '\0';  // abstract namespace: no trailing NUL in the length
  } else {
    len += 1;
  }
  int fd = ::socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (fd < 0) throw ErrnoError(env, "socket", errno);
  ssize_t sent = RetryOnEintr([&] {
    return ::sendto(fd, payload.data(), payload.size(), MSG_NOSIGNAL, reinterpret_cast<struct sockaddr*>(&addr), len);
  });
  int err = errno;
  ::close(fd);
  if (sent < 0) throw ErrnoError(env, "sendto", err, path);
  return Napi::Boolean::New(env, true);
}

}  // namespace

void InitSdNotify(Napi::Env env, Napi::Object exports) {
  exports.Set("sdNotify", Napi::Function::New<SdNotify>(env, "sdNotify"));
}

}  // namespace sb
