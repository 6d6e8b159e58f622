/**
 * `sbctl inbox [--session NAME] [--since ID] [--follow] [--json]`: the notices for a session's
 * agent (issue 13): what sbd did to the session and why, and what its monitors saw. Read from the
 * inbox file itself, so it works whether sbd runs or not; `--follow` waits on the file with
 * inotify (the addon's FileWatch), not a polling loop. Inside a session, SESSIONBRAKE_SESSION
 * names it, so an agent just runs `sbctl inbox --since N`.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { type InboxEntry, entriesSince, inboxDir, readInbox } from '../inbox/store';
import { FileWatch } from '../native';
import { UsageError } from './errors';

export interface InboxOptions {
  session?: string | undefined;
  sinceId: number;
  follow: boolean;
  json: boolean;
}

/** One notice for people: its id (for --since), time, where from, and what. */
export function formatNotice(e: InboxEntry): string {
  const at = new Date(e.atMs).toISOString().replace('T', ' ').slice(0, 19);
  const head = `#${e.id}  ${at}  ${e.from}  ${e.kind}: ${e.text}`;
  const lines = (e.lines ?? []).map((l) => `    ${l}`);
  const more = e.truncated ? [`    (${e.truncated} more matching line${e.truncated === 1 ? '' : 's'} left out)`] : [];
  return [head, ...lines, ...more].join('\n');
}

export function sessionOf(given: string | undefined, env: NodeJS.ProcessEnv): string {
  const s = given ?? env.SESSIONBRAKE_SESSION;
  if (s === undefined || s === '') throw new UsageError('which session? give --session NAME (inside a session started by sbctl run, SESSIONBRAKE_SESSION names it)');
  return s;
}

/** Print the notices after --since; with --follow, then each new one as it comes, until interrupted. */
export async function runInbox(o: InboxOptions, env: NodeJS.ProcessEnv, say: (line: string) => void): Promise<number> {
  const session = sessionOf(o.session, env);
  const dir = inboxDir(env);
  let last = o.sinceId;
  const show = (): void => {
    for (const e of entriesSince(readInbox(dir, session), last)) {
      say(o.json ? JSON.stringify({ session, ...e }) : formatNotice(e));
      last = e.id;
    }
  };
  show();
  if (!o.follow) return 0;
  const file = path.join(dir, `${session}.jsonl`);
  fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
  fs.closeSync(fs.openSync(file, 'a', 0o600)); // a file to watch before the first notice
  return new Promise<number>(() => {
    const watch = new FileWatch(({ kind }) => {
      // compaction replaces the file: watch the new one
      if (kind === 'gone') {
        watch.remove(file);
        fs.closeSync(fs.openSync(file, 'a', 0o600));
        watch.add(file);
      }
      show();
    });
    watch.add(file);
    show(); // what came between the first read and the watch
  });
}
