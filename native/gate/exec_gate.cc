// sb-exec-gate CMD [ARGS...]: waits for one byte on fd 3, then execs CMD. `sbctl run` starts it,
// puts it into the session's new scope, and only then lets it go, so CMD and everything it starts
// live in the scope from their first instruction. EOF on fd 3 without a byte means sbctl gave up
// (the scope could not be made): exit 125 without running anything. No shell is involved: argv
// is passed to execvp as is.
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: sb-exec-gate CMD [ARGS...]  (run by sbctl run, with the gate on fd 3)\n");
    return 125;
  }
  char go = 0;
  ssize_t n;
  do {
    n = read(3, &go, 1);
  } while (n < 0 && errno == EINTR);
  if (n != 1) return 125;
  close(3);
  execvp(argv[1], argv + 1);
  int err = errno;
  std::fprintf(stderr, "sbctl run: cannot run %s: %s\n", argv[1], std::strerror(err));
  return err == ENOENT ? 127 : 126;  // the shell's convention: not found, not executable
}
