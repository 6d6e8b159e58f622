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
// file is gone, or its watch was dropped. IN_ATTRIB, only for files added with attributes:
// its times or mode changed (a heartbeat renewed by `touch` changes nothing else).
constexpr uint32_t kWatchMask = IN_MODIFY | IN_DELETE_SELF | IN_MOVE_SELF;
constexpr uint32_t kGoneMask = IN_DELETE_SELF | IN_MOVE_SELF | IN_IGNORED | IN_UNMOUNT;
// On a directory added with entries: a name that came (created, moved in) or went (deleted,
// moved out), told by the entry's own path, so that a file that does not exist yet is seen
// when it comes (a monitor of a file's state).
constexpr uint32_t kCameMask = IN_CREATE | IN_MOVED_TO;
constexpr uint32_t kWentMask = IN_DELETE | IN_MOVED_FROM;
constexpr uint32_t kEntriesMask = kCameMask | kWentMask | IN_DELETE_SELF | IN_MOVE_SELF | IN_ONLYDIR | IN_MASK_ADD;
// On a grandparent directory: one of its entries went away.
constexpr uint32_t kDirMask = IN_DELETE | IN_MOVED_FROM | IN_ONLYDIR | IN_MASK_ADD;

std::string Dirname(const std::string& p) {
  auto slash = p.find_last_of('/');
  if (slash == std::string::npos) return ".";
  return slash == 0 ? "/" : p.substr(0, slash);
}
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
// per file that changed since the last call. add(path, attributes, entries): with attributes
// true, a change of the file's times or mode is "modified" too; with entries true, path is a
// directory whose entries are told by their own paths ("modified" when one came, "gone" when
// one went) and the directory itself is "gone" when it goes.
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
  dirs_.clear();
  dir_wds_.clear();
  entries_.clear();
  callback_.Reset();
}

Napi::Value FileWatch::Add(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  if (info.Length() < 1 || !info[0].IsString()) ThrowArgError(env, "add(path, attributes): path must be a string");
  if (info.Length() >= 2 && !info[1].IsBoolean()) ThrowArgError(env, "add(path, attributes): attributes must be a boolean");
  if (info.Length() >= 3 && !info[2].IsBoolean()) ThrowArgError(env, "add(path, attributes, entries): entries must be a boolean");
  std::string path = info[0].As<Napi::String>();
  bool attributes = info.Length() >= 2 && info[1].As<Napi::Boolean>().Value();
  bool entries = info.Length() >= 3 && info[2].As<Napi::Boolean>().Value();
  if (fd_ < 0) throw ErrnoError(env, "inotify_add_watch", EBADF, path);
  // A directory of entries may also be some file's watched grandparent (the same wd): its mask
  // is added to, never replaced.
  uint32_t mask = entries ? kEntriesMask : kWatchMask | (attributes ? IN_ATTRIB : 0u);
  int wd = inotify_add_watch(fd_, path.c_str(), mask);
  if (wd < 0) throw ErrnoError(env, "inotify_add_watch", errno, path);
  // The same file under another name gets the same wd: keep the first name.
  if (paths_.emplace(wd, path).second) {
    wds_[path] = wd;
    if (entries) {
      entries_[wd] = path == "/" ? "" : path;  // a directory tells its own deletion: no grandparent
    } else {
      WatchGrandparent(path);
    }
  }
  if (paths_.size() == 1) poll_->Ref();
  return env.Undefined();
}

void FileWatch::WatchGrandparent(const std::string& file) {
  std::string gp = Dirname(Dirname(file));
  auto it = dir_wds_.find(gp);
  if (it != dir_wds_.end()) {
    dirs_[it->second].refs++;
    return;
  }
  // Best effort: without it, a file that is unlinked is still seen (IN_DELETE_SELF).
  int wd = inotify_add_watch(fd_, gp.c_str(), kDirMask);
  if (wd < 0) return;
  dirs_[wd] = DirWatch{gp, 1};
  dir_wds_[gp] = wd;
}

void FileWatch::UnwatchGrandparent(const std::string& file) {
  auto it = dir_wds_.find(Dirname(Dirname(file)));
  if (it == dir_wds_.end()) return;
  int wd = it->second;
  if (--dirs_[wd].refs > 0) return;
  dirs_.erase(wd);
  dir_wds_.erase(it);
  if (paths_.count(wd) == 0) inotify_rm_watch(fd_, wd);  // unless it is watched for its entries too
}

void FileWatch::Forget(int wd, bool kernelDropped) {
  auto it = paths_.find(wd);
  if (it == paths_.end()) return;
  std::string path = it->second;
  paths_.erase(it);
  // the name may be watched on a newer inode already (a file replaced by a rename): keep that
  auto named = wds_.find(path);
  if (named != wds_.end() && named->second == wd) wds_.erase(named);
  bool entries = entries_.erase(wd) > 0;
  // the IN_IGNORED that follows an rm_watch finds no path and is dropped; a directory that is
  // some file's grandparent as well keeps its watch for that file
  if (!kernelDropped && dirs_.count(wd) == 0) inotify_rm_watch(fd_, wd);
  if (!entries) UnwatchGrandparent(path);
}

// remove(path): false when the path was not watched.
Napi::Value FileWatch::Remove(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  if (info.Length() < 1 || !info[0].IsString()) ThrowArgError(env, "remove(path): path must be a string");
  std::string path = info[0].As<Napi::String>();
  auto it = wds_.find(path);
  if (it == wds_.end() || fd_ < 0) return Napi::Boolean::New(env, false);
  // (an EINVAL from inotify_rm_watch means the kernel dropped the watch already: nothing to undo)
  Forget(it->second, false);
  if (paths_.empty()) poll_->Unref();
  return Napi::Boolean::New(env, true);
}

void FileWatch::OnReadable(Napi::Env env) {
  // Drain everything queued, then report each file once: gone wins over modified.
  std::map<std::string, bool> changed;  // path -> gone
  std::map<int, bool> gone;              // wd -> the kernel dropped the watch itself (IN_IGNORED)
  alignas(struct inotify_event) char buf[16384];
  bool overflow = false;
  for (;;) {
    ssize_t n = RetryOnEintr([&] { return ::read(fd_, buf, sizeof buf); });
    if (n <= 0) break;  // EAGAIN: drained (other errors surface on the next read)
    for (char* p = buf; p < buf + n;) {
      auto* ev = reinterpret_cast<struct inotify_event*>(p);
      p += sizeof(struct inotify_event) + ev->len;
      if (ev->mask & IN_Q_OVERFLOW) {
        overflow = true;
        continue;
      }
      auto dir = dirs_.find(ev->wd);
      if (dir != dirs_.end()) {
        if (ev->mask & IN_IGNORED) {  // the grandparent itself went away: its entries went first
          dir_wds_.erase(dir->second.path);
          dirs_.erase(dir);
        } else if (ev->len > 0 && (ev->mask & (IN_DELETE | IN_MOVED_FROM))) {
          std::string prefix = (dir->second.path == "/" ? "" : dir->second.path) + "/" + ev->name + "/";
          for (const auto& kv : paths_) {
            if (kv.second.compare(0, prefix.size(), prefix) == 0) gone.emplace(kv.first, false);
          }
        }
        if (paths_.count(ev->wd) == 0) continue;  // else also a directory watched for its entries
      }
      auto it = paths_.find(ev->wd);
      if (it == paths_.end()) continue;  // removed by us, or already reported gone
      auto listed = entries_.find(ev->wd);
      if (listed != entries_.end() && ev->len > 0) {
        // an entry came or went: told by its own path; the last word of this read wins
        if (ev->mask & (kCameMask | kWentMask)) changed[listed->second + "/" + ev->name] = (ev->mask & kWentMask) != 0;
        continue;
      }
      if (ev->mask & kGoneMask) {
        gone[ev->wd] = gone[ev->wd] || (ev->mask & IN_IGNORED) != 0;
      } else {
        changed.emplace(it->second, false);
      }
    }
  }
  if (overflow) {  // events were lost: every file may have changed
    for (const auto& kv : paths_) changed.emplace(kv.second, false);
  }
  for (const auto& kv : gone) {
    auto it = paths_.find(kv.first);
    if (it == paths_.end()) continue;
    changed[it->second] = true;
    Forget(kv.first, kv.second);  // gone exactly once: its watch is released now
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
