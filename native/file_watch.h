// Many files watched through one inotify fd. Each loop turn delivers at most one event per
// file: "modified", or "gone" once the file has disappeared; its watch is then released.
//
// A removed cgroup sends nothing to watches on its files (kernfs drops them without the VFS;
// seen on kernel 6.1): only the rmdir shows, as IN_DELETE of the cgroup's name in the PARENT
// directory. So besides each file, the parent of its directory is watched (once per distinct
// directory, refcounted), and a deleted entry there makes every watched file below it gone.
//
// A directory added with entries tells each entry that comes or goes by the entry's own path:
// a file that does not exist yet is seen when it is created or moved in.
#pragma once
#include <napi.h>

#include <map>
#include <string>

#include "poll_handle.h"

namespace sb {

class FileWatch : public Napi::ObjectWrap<FileWatch> {
 public:
  static void Init(Napi::Env env, Napi::Object exports);
  explicit FileWatch(const Napi::CallbackInfo& info);
  ~FileWatch() override;

 private:
  Napi::Value Add(const Napi::CallbackInfo& info);
  Napi::Value Remove(const Napi::CallbackInfo& info);
  Napi::Value Close(const Napi::CallbackInfo& info);
  Napi::Value Ref(const Napi::CallbackInfo& info);
  Napi::Value Unref(const Napi::CallbackInfo& info);
  Napi::Value GetSize(const Napi::CallbackInfo& info);
  void OnReadable(Napi::Env env);
  void Release();
  void WatchGrandparent(const std::string& file);
  void UnwatchGrandparent(const std::string& file);
  // Forget a file's watch (the kernel's, unless it dropped it already) and its grandparent's ref.
  void Forget(int wd, bool kernelDropped);

  int fd_ = -1;
  PollHandle* poll_ = nullptr;
  Napi::FunctionReference callback_;
  std::map<int, std::string> paths_;  // watch descriptor -> path
  std::map<std::string, int> wds_;    // path -> watch descriptor
  struct DirWatch {
    std::string path;
    int refs;
  };
  std::map<int, DirWatch> dirs_;        // wd of a watched grandparent directory -> its path, users
  std::map<std::string, int> dir_wds_;  // grandparent path -> wd
  std::map<int, std::string> entries_;  // wd of a directory watched for its entries -> its path ("" for /)
};

}  // namespace sb
