// Many files watched through one inotify fd. Each loop turn delivers at most one event per
// file: "modified", or "gone" once the file (a removed cgroup's file) has disappeared and the
// kernel has dropped its watch.
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

  int fd_ = -1;
  PollHandle* poll_ = nullptr;
  Napi::FunctionReference callback_;
  std::map<int, std::string> paths_;  // watch descriptor -> path
  std::map<std::string, int> wds_;    // path -> watch descriptor
};

}  // namespace sb
