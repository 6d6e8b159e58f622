// The whole addon as one translation unit, for node-gyp (binding.gyp: an npm install of the packed
// tarball builds it once, and one unit parses node-addon-api's headers once: 9 s against 34 s for the
// eight files apart on the host, one core busy instead of two). CMake (the checkout) still
// builds each file apart, for incremental builds. Every native/*.cc is here: test/native/gyp-build.test.js.
#include "../addon.cc"
#include "../errors.cc"
#include "../file_watch.cc"
#include "../journal_send.cc"
#include "../pidfd.cc"
#include "../poll_handle.cc"
#include "../psi_trigger.cc"
#include "../sd_notify.cc"
