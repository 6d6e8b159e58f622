// One fd watched on Node's own event loop through uv_poll. The uv handle outlives its owner:
// uv_close is asynchronous, so the handle frees itself in its close callback and the owner
// only drops its pointer. Once Close() has run, no event reaches the owner again.
#pragma once
#include <napi.h>
#include <uv.h>

#include <functional>

namespace sb {

class PollHandle {
 public:
  // status < 0 is a libuv error (UV_EBADF when the kernel reported POLLERR).
  using Handler = std::function<void(int status, int events)>;

  // Starts watching `fd` for `events` (UV_READABLE, UV_PRIORITIZED). Throws on failure.
  static PollHandle* Start(Napi::Env env, int fd, int events, Handler handler);

  // Stops watching and releases the handle. Does not close the fd: the caller does,
  // after this returns (uv_close has already removed it from epoll by then).
  void Close();
  void Ref();
  void Unref();

 private:
  PollHandle() = default;
  static void OnEvent(uv_poll_t* h, int status, int events);
  uv_poll_t poll_{};
  Handler handler_;
};

}  // namespace sb
