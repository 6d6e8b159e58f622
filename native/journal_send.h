// One journal entry sent with journald's native protocol (systemd.io/JOURNAL_NATIVE_PROTOCOL):
// a datagram to the journal's socket, or a sealed memfd passed with SCM_RIGHTS when the entry is
// too big for a datagram. The entry's bytes are encoded in JS (src/journal/encode.ts).
#pragma once
#include <napi.h>

namespace sb {
void InitJournalSend(Napi::Env env, Napi::Object exports);
}
