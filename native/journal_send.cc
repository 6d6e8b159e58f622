#include "journal_send.h"

#include <fcntl.h>
#include <sys/mman.h>
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

// Closes an fd when it goes out of scope (every error path throws).
struct Fd {
  int fd;
  explicit Fd(int f) : fd(f) {}
  ~Fd() {
    if (fd >= 0) ::close(fd);
  }
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
};

// The socket's address: "/path", or "@name" for an abstract socket (as sdNotify takes it).
bool Address(const std::string& path, struct sockaddr_un* addr, socklen_t* len) {
  *addr = {};
  addr->sun_family = AF_UNIX;
  if (path.empty() || path.size() >= sizeof addr->sun_path || (path[0] != '/' && path[0] != '@')) return false;
  std::memcpy(addr->sun_path, path.data(), path.size());
  *len = static_cast<socklen_t>(offsetof(struct sockaddr_un, sun_path) + path.size());
  if (path[0] == '@') {
    addr->sun_path[0] = '\0';  // abstract namespace: no trailing NUL in the length
  } else {
    *len += 1;
  }
  return true;
}

// The entry in a memfd sealed against any change, as journald wants it (it refuses an unsealed one).
int SealedMemfd(Napi::Env env, const uint8_t* data, size_t size) {
  int fd = ::memfd_create("sbd-journal-entry", MFD_CLOEXEC | MFD_ALLOW_SEALING);
  if (fd < 0) throw ErrnoError(env, "memfd_create", errno);
  size_t done = 0;
  while (done < size) {
    ssize_t n = ::write(fd, data + done, size - done);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      int err = errno;
      ::close(fd);
      throw ErrnoError(env, "write", err);
    }
    done += static_cast<size_t>(n);
  }
  if (::fcntl(fd, F_ADD_SEALS, F_SEAL_SEAL | F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_WRITE) < 0) {
    int err = errno;
    ::close(fd);
    throw ErrnoError(env, "fcntl", err);
  }
  return fd;
}

// A datagram with no payload and one fd (SCM_RIGHTS): the other form journald accepts.
ssize_t SendFd(int sock, const struct sockaddr_un& addr, socklen_t len, int fd) {
  union {
    struct cmsghdr align;
    char buf[CMSG_SPACE(sizeof(int))];
  } control{};
  struct msghdr mh {};
  mh.msg_name = const_cast<struct sockaddr_un*>(&addr);
  mh.msg_namelen = len;
  mh.msg_control = control.buf;
  mh.msg_controllen = sizeof control.buf;
  struct cmsghdr* c = CMSG_FIRSTHDR(&mh);
  c->cmsg_level = SOL_SOCKET;
  c->cmsg_type = SCM_RIGHTS;
  c->cmsg_len = CMSG_LEN(sizeof(int));
  std::memcpy(CMSG_DATA(c), &fd, sizeof(int));
  return RetryOnEintr([&] { return ::sendmsg(sock, &mh, MSG_NOSIGNAL | MSG_DONTWAIT); });
}

// journalSend(socketPath, entry): "datagram" or "memfd", the way the entry went. MSG_DONTWAIT:
// a journal that does not keep up fails the send (EAGAIN) instead of blocking sbd's event loop;
// the caller decides what then (sbd writes the incident to stdout instead).
Napi::Value JournalSend(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  if (info.Length() < 2 || !info[0].IsString() || !info[1].IsBuffer()) {
    ThrowArgError(env, "journalSend(socketPath, entry): expected a string and a Buffer");
  }
  std::string path = info[0].As<Napi::String>();
  Napi::Buffer<uint8_t> entry = info[1].As<Napi::Buffer<uint8_t>>();
  struct sockaddr_un addr;
  socklen_t len;
  if (!Address(path, &addr, &len)) throw ErrnoError(env, "sendmsg", EINVAL, path);
  Fd sock(::socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0));
  if (sock.fd < 0) throw ErrnoError(env, "socket", errno);

  struct iovec iov {};
  iov.iov_base = entry.Data();
  iov.iov_len = entry.Length();
  struct msghdr mh {};
  mh.msg_name = &addr;
  mh.msg_namelen = len;
  mh.msg_iov = &iov;
  mh.msg_iovlen = 1;
  if (RetryOnEintr([&] { return ::sendmsg(sock.fd, &mh, MSG_NOSIGNAL | MSG_DONTWAIT); }) >= 0) return Napi::String::New(env, "datagram");
  int err = errno;
  // Too big for one datagram (over the socket's send buffer): the same bytes in a memfd.
  if (err != EMSGSIZE && err != ENOBUFS) throw ErrnoError(env, "sendmsg", err, path);
  Fd memfd(SealedMemfd(env, entry.Data(), entry.Length()));
  if (SendFd(sock.fd, addr, len, memfd.fd) < 0) throw ErrnoError(env, "sendmsg", errno, path);
  return Napi::String::New(env, "memfd");
}

}  // namespace

void InitJournalSend(Napi::Env env, Napi::Object exports) {
  exports.Set("journalSend", Napi::Function::New<JournalSend>(env, "journalSend"));
}

}  // namespace sb
