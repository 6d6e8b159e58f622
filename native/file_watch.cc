#include "file_watch.h"

#include <sys/inotify.h>
#include <unistd.h>

#include <cerrno>
#include <vector>

#include "errors.h"

namespace sb {

namespace {
// What the kernel reports about a watched file. IN_MODIFY: the file changed (cgroup files
// such as memory.events raise it on every counter change). IN_DELETE_SELF / IN_IGNORED: the
// file is gone, or its watch was dropped.
constexpr uint32_t kWatchMask = IN_MODIFY | IN_DELETE_SELF | IN_MOVE_SELF;
constexpr uint32_t kGoneMask = IN_DELETE_SELF | IN_MOVE_SELF | IN_IGNORED | IN_UNMOUNT;
}  // namespace

void FileWatch::Init(Napi::Env env, Napi::Object exports) {
  Napi::Function cls = DefineClass(
      env, "FileWatch",
      {InstanceMethod<&FileWatch::Add>("add"), InstanceMethod<&FileWatch::Remove>("remove"),
       InstanceMethod<&FileWatch::Close>("close"), InstanceMethod<&FileWatch::Ref>("ref"),
       InstanceMethod<&FileWatch::Unref>("unref"), InstanceAccessor<&FileWatch::GetSize>("size")});
  exports.Set("FileWatch", cls);
}

// new FileWatch(cb): cb(events) with events = [[path, "modified" | "gone"], ...], one entry
// per file that changed since the last call.
FileWatch::FileWatch(const Napi::CallbackInfo& info) : Napi::ObjectWrap<FileWatch>(info) {
  Napi::Env env = info.Env();
  if (info.Length() < 1 || !info[0].IsFunction()) ThrowArgError(env, "FileWatch(cb): cb must be a function");
  fd_ = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
  if (fd_ < 0) throw ErrnoError(env, "inotify_init1", errno);
  callback_ = Napi::Persistent(info[0].As<Napi::Function>());
  try {
    poll_ = PollHandle::Start(env, fd_, UV_READABLE, [this, env](int, int) { OnReadable(env); });
  } catch (...) {
    Release();
    throw;
  }
  poll_->Unref();  // an empty watch set keeps nobody's loop alive; add() refs it
}

FileWatch::~FileWatch() { Release(); }

void FileWatch::Release() {
  if (poll_ != nullptr) {
    poll_->Close();
    poll_ = nullptr;
  }
  if (fd_ >= 0) {
    ::close(fd_);  // releases every watch of this fd at once
    fd_ = -1;
  }
  paths_.clear();
  wds_.clear();
  callback_.Reset();
}

Napi::Value FileWatch::Add(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  if (info.Length() < 1 || !info[0].IsString()) ThrowArgError(env, "add(path): path must be a string");
  std::string path = info[0].As<Napi::String>();
  if (fd_ < 0) throw ErrnoError(env, "inotify_add_watch", EBADF, path);
  int wd = inotify_add_watch(fd_, path.c_str(), kWatchMask);
  if (wd < 0) throw ErrnoError(env, "inotify_add_watch", errno, path);
  // The same file under another name gets the same wd: keep the first name.
  if (paths_.emplace(wd, path).second) wds_[path] = wd;
  if (paths_.size() == 1) poll_->Ref();
  return env.Undefined();
}

// remove(path): false when the path was not watched.
Napi::Value FileWatch::Remove(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  if (info.Length() < 1 || !info[0].IsString()) ThrowArgError(env, "remove(path): path must be a string");
  std::string path = info[0].As<Napi::String>();
  auto it = wds_.find(path);
  if (it == wds_.end() || fd_ < 0) return Napi::Boolean::New(env, false);
  int wd = it->second;
  wds_.erase(it);
  paths_.erase(wd);  // the IN_IGNORED that follows finds no path and is dropped
  // EINVAL here means the kernel already dropped the watch (file gone): nothing to undo.
  if (inotify_rm_watch(fd_, wd) != 0 && errno != EINVAL) throw ErrnoError(env, "inotify_rm_watch", errno, path);
  if (paths_.empty()) poll_->Unref();
  return Napi::Boolean::New(env, true);
}

void FileWatch::OnReadable(Napi::Env env) {
  // Drain everything queued, then report each file once: gone wins over modified.
  std::map<std::string, bool> changed;  // path -> gone
  alignas(struct inotify_event) char buf[16384];
  bool overflow = false;
  for (;;) {
    ssize_t n = ::read(fd_, buf, sizeof buf);
    if (n <= 0) break;  // EAGAIN: drained (other errors surface on the next read)
    for (char* p = buf; p < buf + n;) {
      auto* ev = reinterpret_cast<struct inotify_event*>(p);
      p += sizeof(struct inotify_event) + ev->len;
      if (ev->mask & IN_Q_OVERFLOW) {
        overflow = true;
        continue;
      }
      auto it = paths_.find(ev->wd);
      if (it == paths_.end()) continue;  // removed by us, or already reported gone
      if (ev->mask & kGoneMask) {
        changed[it->second] = true;
        if (ev->mask & IN_IGNORED) {  // the kernel has released the watch
          wds_.erase(it->second);
          paths_.erase(it);
        }
      } else {
        changed.emplace(it->second, false);
      }
    }
  }
  if (overflow) {  // events were lost: every file may have changed
    for (const auto& kv : paths_) changed.emplace(kv.second, false);
  }
  for (auto it = changed.begin(); it != changed.end(); ++it) {
    // A DELETE_SELF whose IN_IGNORED is still to come: release the watch now, so that the
    // file is reported gone exactly once.
    if (it->second && wds_.count(it->first)) {
      int wd = wds_[it->first];
      wds_.erase(it->first);
      paths_.erase(wd);
      inotify_rm_watch(fd_, wd);
    }
  }
  if (changed.empty() || callback_.IsEmpty()) return;
  if (paths_.empty() && poll_ != nullptr) poll_->Unref();
  Napi::HandleScope scope(env);
  Napi::Array events = Napi::Array::New(env, changed.size());
  uint32_t i = 0;
  for (const auto& kv : changed) {
    Napi::Array pair = Napi::Array::New(env, 2);
    pair.Set(0u, Napi::String::New(env, kv.first));
    pair.Set(1u, Napi::String::New(env, kv.second ? "gone" : "modified"));
    events.Set(i++, pair);
  }
  CallFromLoop(env, callback_, {events});
}

Napi::Value FileWatch::Close(const Napi::CallbackInfo& info) {
  Release();
  return info.Env().Undefined();
}

Napi::Value FileWatch::Ref(const Napi::CallbackInfo& info) {
  if (poll_ != nullptr) poll_->Ref();
  return info.Env().Undefined();
}

Napi::Value FileWatch::Unref(const Napi::CallbackInfo& info) {
  if (poll_ != nullptr) poll_->Unref();
  return info.Env().Undefined();
}

Napi::Value FileWatch::GetSize(const Napi::CallbackInfo& info) {
  return Napi::Number::New(info.Env(), static_cast<double>(paths_.size()));
}

}  // namespace sb
