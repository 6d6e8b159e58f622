/**
 * Is a poll (or ssh) probe a fast read-only look, or work in disguise (issue 13)? A poll runs
 * every N s: a probe that builds, tests, installs or trains would start that work again and
 * again, so it is quarantined with the reason instead of run. So are shell syntax (redirection,
 * backgrounding, pipes, command lists: an argv has none, and a token that looks like one means
 * a shell string was split by hand) and a shell as the program. Pure: the argv only.
 */

/** Verbs of work, as the first word after the program or as a subcommand (npm run build). */
const WORKLOAD_VERBS = new Set(['build', 'compile', 'test', 'tests', 'install', 'ci', 'add', 'train', 'fit', 'deploy', 'publish', 'release', 'migrate', 'rebuild', 'bundle', 'watch', 'serve', 'start', 'dev', 'run-script', 'exec', 'upgrade', 'update', 'apply']);
/** Programs that are work by themselves, whatever their arguments. */
const WORKLOAD_PROGRAMS = new Set(['make', 'gmake', 'ninja', 'cmake', 'cc', 'gcc', 'g++', 'clang', 'clang++', 'rustc', 'tsc', 'webpack', 'vite', 'esbuild', 'rollup', 'pytest', 'jest', 'vitest', 'mocha', 'tox', 'nox', 'apt', 'apt-get', 'dnf', 'yum', 'pip', 'pip3', 'torchrun', 'accelerate', 'deepspeed', 'docker-compose', 'rm', 'mv', 'cp', 'dd', 'rsync', 'kill', 'pkill', 'killall', 'shutdown', 'reboot']);
/** Programs that would run a string as a command: a probe is an argv, never a shell string. */
const SHELLS = new Set(['sh', 'bash', 'zsh', 'dash', 'ksh', 'fish', 'csh', 'tcsh', 'busybox', 'env', 'xargs', 'eval', 'nohup', 'setsid', 'timeout', 'nice', 'sudo', 'doas']);
/** Shell syntax as a token of its own or at a token's edge. */
const SHELL_TOKENS = /^(?:[0-9]*>>?|<<?|&>|>&|&&?|\|\|?|;|\$\(.*|`.*)$|(?:[;&|]|[0-9]*>>?|<)$/;

export type ProbeVerdict = { ok: true } | { ok: false; reason: string };

const base = (program: string): string => program.slice(program.lastIndexOf('/') + 1);

/** Judge a probe's argv (pure). */
export function judgeProbe(argv: readonly string[]): ProbeVerdict {
  const [program = '', ...args] = argv;
  const name = base(program);
  if (SHELLS.has(name)) return { ok: false, reason: `runs "${name}", which runs other commands: give the probe itself as the argv` };
  if (WORKLOAD_PROGRAMS.has(name)) return { ok: false, reason: `"${name}" does work or changes things; a poll must be a fast read-only look (use a spawn monitor for work)` };
  for (const [i, arg] of args.entries()) {
    if (SHELL_TOKENS.test(arg)) return { ok: false, reason: `argument ${i + 1} "${arg}" is shell syntax (redirection, backgrounding, a pipe or a command list): a poll is one argv, run without a shell` };
  }
  // The first non-option word (and the one after "run") is the subcommand: npm test, cargo build, npm run build.
  const words = args.filter((a) => !a.startsWith('-'));
  const sub = words[0] === 'run' || words[0] === 'run-script' ? words[1] : words[0];
  for (const w of [words[0], sub]) {
    if (w !== undefined && WORKLOAD_VERBS.has(w.toLowerCase())) return { ok: false, reason: `"${name} ${w}" is work (build, test, install, training...): a poll runs every interval; start it once as a spawn monitor and tail its output` };
  }
  return { ok: true };
}

/** What a word of an ssh probe may hold: the remote side runs it through a shell, which would read anything else (spaces, quotes, $, globs, ~, ...). */
const REMOTE_WORD = /^[A-Za-z0-9_.,:=@%+/-]+$/;

/**
 * Judge an ssh probe's remote argv (pure): judgeProbe's rules, and every word plain. ssh joins
 * its command words with spaces and hands the line to the remote user's shell, so a word with a
 * character that shell reads would not arrive as the word given: it is refused, not quoted.
 */
export function judgeRemoteProbe(argv: readonly string[]): ProbeVerdict {
  const verdict = judgeProbe(argv);
  if (!verdict.ok) return verdict;
  for (const [i, word] of argv.entries()) {
    if (!REMOTE_WORD.test(word)) {
      return { ok: false, reason: `word ${i + 1} ${JSON.stringify(word)} has a character the remote shell would read: an ssh probe's words may hold only letters, digits and _ . , : = @ % + / -` };
    }
  }
  return { ok: true };
}
