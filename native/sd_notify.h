// sd_notify(3) without libsystemd: one datagram of KEY=VALUE lines to $NOTIFY_SOCKET.
#pragma once
#include <napi.h>

namespace sb {
void InitSdNotify(Napi::Env env, Napi::Object exports);
}
