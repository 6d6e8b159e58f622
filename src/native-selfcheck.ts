/**
 * `npm run selfcheck`: loads the addon, says which build it found, and exercises each part
 * once on this machine. Exit 0 when every part works (PSI may be absent: said, not failed).
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { encodeEntry } from './journal/encode';
import { FileWatch, JOURNAL_SOCKET, Pidfd, PsiTrigger, addonBuiltBy, addonPath, journalSend, sdNotify } from './native';

async function main(): Promise<void> {
  console.log(`addon: ${addonPath} (${addonBuiltBy()}, Node ${process.version}, N-API ${process.versions.napi})`);

  const self = Pidfd.open(process.pid);
  console.log(`pidfd: opened fd ${self.fd} for pid ${self.pid}, exited=${String(self.hasExited())}`);
  self.close();

  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sb-selfcheck-'));
  const file = path.join(dir, 'probe');
  fs.writeFileSync(file, '');
  const seen = await new Promise<string>((resolve) => {
    const watch = new FileWatch((e) => {
      watch.close();
      resolve(e.kind);
    });
    watch.add(file);
    fs.appendFileSync(file, 'x');
  });
  fs.rmSync(dir, { recursive: true });
  console.log(`inotify: a write was reported as "${seen}"`);

  const pressure = '/proc/pressure/memory';
  if (fs.existsSync(pressure)) {
    const t = PsiTrigger.arm(pressure, { kind: 'full', stallUs: 200_000, windowUs: 2_000_000 }, () => {});
    console.log(`psi: trigger "full 200000 2000000" armed on ${pressure}`);
    t.close();
  } else {
    console.log(`psi: ${pressure} is missing: this kernel has no PSI; sbd would sample on a timer`);
  }

  const socket = process.env.NOTIFY_SOCKET;
  console.log(`sd_notify: ${socket ? `socket ${socket}` : 'no NOTIFY_SOCKET set, nothing sent'} -> ${String(sdNotify('STATUS=selfcheck', socket))}`);
  if (fs.existsSync(JOURNAL_SOCKET)) {
    const entry = encodeEntry([['MESSAGE', 'sessionbrake selfcheck: the native journal protocol works'], ['PRIORITY', '7'], ['SYSLOG_IDENTIFIER', 'sbd-selfcheck']]);
    console.log(`journal: one debug entry to ${JOURNAL_SOCKET} -> ${journalSend(entry)} (journalctl -t sbd-selfcheck)`);
  } else {
    console.log(`journal: no ${JOURNAL_SOCKET} here (no journald), nothing sent`);
  }
  console.log('selfcheck: ok');
}

main().catch((err: unknown) => {
  console.error(`selfcheck: FAILED: ${err instanceof Error ? err.message : String(err)}`);
  process.exit(1);
});
