#include "poll_handle.h"

#include "errors.h"

namespace sb {

PollHandle* PollHandle::Start(Napi::Env env, int fd, int events, Handler handler) {
  uv_loop_t* loop = nullptr;
  if (napi_get_uv_event_loop(env, &loop) != napi_ok) {
    throw Napi::Error::New(env, "napi_get_uv_event_loop failed");
  }
  auto* p = new PollHandle();
  p->handler_ = std::move(handler);
  int rc = uv_poll_init(loop, &p->poll_, fd);
  if (rc == 0) {
    p->poll_.data = p;
    rc = uv_poll_start(&p->poll_, events, &PollHandle::OnEvent);
    if (rc != 0) {
      p->Close();
      throw ErrnoError(env, "uv_poll_start", -rc);
    }
    return p;
  }
  delete p;
  throw ErrnoError(env, "uv_poll_init", -rc);
}

void PollHandle::OnEvent(uv_poll_t* h, int status, int events) {
  auto* p = static_cast<PollHandle*>(h->data);
  // A copy: the handler may call Close(), which clears handler_ while it runs.
  Handler handler = p->handler_;
  if (handler) handler(status, events);
}

void PollHandle::Close() {
  handler_ = nullptr;  // from here on, an event already queued reaches nobody
  uv_poll_stop(&poll_);
  uv_close(reinterpret_cast<uv_handle_t*>(&poll_), [](uv_handle_t* h) {
    delete static_cast<PollHandle*>(h->data);
  });
}

void PollHandle::Ref() { uv_ref(reinterpret_cast<uv_handle_t*>(&poll_)); }
void PollHandle::Unref() { uv_unref(reinterpret_cast<uv_handle_t*>(&poll_)); }

}  // namespace sb
