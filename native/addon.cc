// The sessionbrake addon: only what Node cannot do by itself. All policy lives in JS.
#include <napi.h>

#include "file_watch.h"
#include "journal_send.h"
#include "pidfd.h"
#include "psi_trigger.h"
#include "sd_notify.h"

namespace {

Napi::Object Init(Napi::Env env, Napi::Object exports) {
  sb::Pidfd::Init(env, exports);
  sb::FileWatch::Init(env, exports);
  sb::PsiTrigger::Init(env, exports);
  sb::InitSdNotify(env, exports);
  sb::InitJournalSend(env, exports);
  exports.Set("abiVersion", Napi::Number::New(env, 1));
  return exports;
}

}  // namespace

NODE_API_MODULE(sessionbrake, Init)
