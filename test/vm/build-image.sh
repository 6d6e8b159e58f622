#!/usr/bin/env bash
# Build (or reuse) a guest image of the test lab: Debian 12 (SB_VM_SUITE=bookworm, the default) or
# Debian 13 (SB_VM_SUITE=trixie). Prints the image directory on stdout; progress goes to stderr.
# Everything lives under $SB_VM_CACHE (default /var/tmp/sessionbrake-vm):
#   base-SUITE-KEY.tar  mmdebstrap output; KEY = hash(suite, image/packages*.txt, image/hooks/*, apt sources)
#   img-SUITE-KEY/      rootfs.img vmlinuz initrd.img; KEY = hash(base key, image/overlay/, this script, node -v)
#   current-SUITE       symlink to the newest img-SUITE-KEY (what the run scripts use by default)
#   current             = current-bookworm (the name older scripts use)
# Builds go to temporary names and are renamed at the end, so a killed build leaves nothing that
# looks valid. Env: SB_VM_SUITE, SB_VM_CACHE, SB_VM_SOURCES (apt sources file for that suite;
# default the host's, with the host's suite names replaced by SB_VM_SUITE),
# SB_VM_NODE (node binary to copy; default `command -v node`), SB_VM_IMG_SIZE (3G).
set -euo pipefail
HERE="$(cd "$(dirname "$0")" && pwd)"
. "$HERE/lib.sh"
IMG_SIZE="${SB_VM_IMG_SIZE:-3G}"
mkdir -p "$CACHE"
exec 9>"$CACHE/.build.lock"; flock 9          # one build at a time per cache
rm -rf "$CACHE"/*.tmp.*                        # leftovers of killed builds (we hold the lock)
sbvm_host_deps

sbvm_suite_ok
SOURCES="${SB_VM_SOURCES:-}"
if [[ -z "$SOURCES" ]]; then
  for f in /etc/apt/sources.list.d/debian.sources /etc/apt/sources.list; do
    [[ -z "$SOURCES" && -s "$f" ]] && SOURCES="$f"
  done
  [[ -n "$SOURCES" ]] || { echo "no apt sources found: set SB_VM_SOURCES" >&2; exit 2; }
  # the same mirror serves every suite: the host's sources with its codename replaced by the guest's
  # (bookworm -> trixie also turns bookworm-updates/-security into trixie-updates/-security)
  host_suite=$(. /etc/os-release && echo "${VERSION_CODENAME:-}")
  if [[ -n "$host_suite" && "$host_suite" != "$SUITE" ]]; then
    derived="$CACHE/sources-$SUITE.tmp.$$"
    sed -E "s/\b$host_suite\b/$SUITE/g" "$SOURCES" >"$derived"
    SOURCES="$derived"
    trap 'rm -f "$derived"' EXIT
  fi
fi
NODE_BIN="$(readlink -f "${SB_VM_NODE:-$(command -v node)}")"
NPM_DIR="$(dirname "$NODE_BIN")/../lib/node_modules/npm"

# hash of file names + contents + modes under a directory (or of single files)
tree_hash() {
  (cd "$1" && find . -type f -printf '%p %m\n' | sort | while read -r p m; do echo "$p $m $(sha256sum <"$p")"; done | sha256sum | cut -c1-16)
}
# image/packages.txt is shared; image/packages-SUITE.txt (if any) adds what only that suite needs
PKGS="$(for f in "$HERE/image/packages.txt" "$HERE/image/packages-$SUITE.txt"; do [[ ! -f $f ]] || cat "$f"; done | sed 's/#.*//' | xargs)"
BKEY=$( { echo "$SUITE"; echo "$PKGS"; tree_hash "$HERE/image/hooks"; cat "$SOURCES"; } | sha256sum | cut -c1-16)
IKEY=$( { echo "$BKEY"; tree_hash "$HERE/image/overlay"; cat "$0"; "$NODE_BIN" --version; } | sha256sum | cut -c1-16)
BASE="$CACHE/base-$SUITE-$BKEY.tar" IMGDIR="$CACHE/img-$SUITE-$IKEY"
# current-SUITE -> img-SUITE-KEY (and current -> the same for bookworm, the name older scripts use)
point_current() {
  local l
  for l in "current-$SUITE" $([[ $SUITE == bookworm ]] && echo current); do
    ln -sfn "img-$SUITE-$IKEY" "$CACHE/$l.tmp.$$" && mv -T "$CACHE/$l.tmp.$$" "$CACHE/$l"
  done
}

if [[ -s "$IMGDIR/rootfs.img" ]]; then
  echo "image cached ($SUITE, key $IKEY, base $BKEY): $IMGDIR" >&2
  point_current
  echo "$IMGDIR"; exit 0
fi

t0=$SECONDS
if [[ -s "$BASE" ]]; then
  echo "+ base cached (key $BKEY)" >&2
else
  echo "+ mmdebstrap $SUITE -> $BASE (~1-3 min)" >&2
  # --format=tar: mmdebstrap would otherwise guess the format from the (temporary) file name
  mmdebstrap --variant=minbase --mode=root --format=tar --quiet \
    --aptopt='APT::Install-Recommends "false"' --include="${PKGS// /,}" \
    --customize-hook="sh $(printf %q "$HERE/image/hooks/customize.sh") \"\$1\"" \
    "$SUITE" "$BASE.tmp.$$" "$SOURCES"
  mv "$BASE.tmp.$$" "$BASE"
fi
t1=$SECONDS

echo "+ image $IKEY: unpack, add node $("$NODE_BIN" --version) + overlay, mkfs.ext4" >&2
tmp="$IMGDIR.tmp.$$"; root="$tmp/rootfs.d"
mkdir -p "$root"
tar -C "$root" -xpf "$BASE"
# Debian's virtio/9p/ext4 drivers are modules: the initrd is needed, so take both from the rootfs
cp -L "$root"/boot/vmlinuz-* "$tmp/vmlinuz"
cp -L "$root"/boot/initrd.img-* "$tmp/initrd.img"
# Node 20 from the host (bookworm ships 18); it needs only libc/libstdc++
install -m755 "$NODE_BIN" "$root/usr/local/bin/node"
if [[ -d "$NPM_DIR" ]]; then
  mkdir -p "$root/usr/local/lib/node_modules"
  cp -a "$NPM_DIR" "$root/usr/local/lib/node_modules/npm"
  ln -sf ../lib/node_modules/npm/bin/npm-cli.js "$root/usr/local/bin/npm"
  ln -sf ../lib/node_modules/npm/bin/npx-cli.js "$root/usr/local/bin/npx"
fi
# Node's headers, so that `npm install -g` of the packed tarball builds the addon offline (node-gyp
# would otherwise download them); npm's global config says where they are
NODE_INC="$(dirname "$NODE_BIN")/../include/node"
if [[ -f "$NODE_INC/node_api.h" ]]; then
  mkdir -p "$root/usr/local/include" "$root/usr/local/etc"
  cp -a "$NODE_INC" "$root/usr/local/include/node"
  echo "nodedir=/usr/local" >"$root/usr/local/etc/npmrc"
fi
cp -a "$HERE/image/overlay/." "$root/"
ln -sf /etc/systemd/system/lab-runner.service "$root/etc/systemd/system/multi-user.target.wants/"
for u in e2scrub_reap.service e2scrub_all.timer fstrim.timer apt-daily.timer apt-daily-upgrade.timer; do
  ln -sf /dev/null "$root/etc/systemd/system/$u"     # mask: nothing here needs them, boot is slow enough
done
mkdir -p "$root/mnt/lab" "$root/mnt/proj"
# every boot of a fresh image would otherwise be an "update" boot (ConditionNeedsUpdate: /usr newer
# than /etc/.updated): ldconfig, journal catalog and update-done cost ~20 s of TCG boot on trixie
touch "$root/etc/.updated" "$root/var/.updated"
truncate -s "$IMG_SIZE" "$tmp/rootfs.img"
mkfs.ext4 -q -F -L labroot -E root_owner=0:0 -d "$root" "$tmp/rootfs.img"
rm -rf "$root"
echo "$IKEY base=$BKEY node=$("$NODE_BIN" --version) built=$(date -u +%FT%TZ)" >"$tmp/key"
mv -T "$tmp" "$IMGDIR"                                  # the image becomes valid only here
point_current
# keep the two newest of each kind and suite (a second checkout with other keys does not thrash at once)
ls -1dt "$CACHE/img-$SUITE-"* | tail -n +3 | xargs -r rm -rf
ls -1dt "$CACHE/base-$SUITE-"*.tar | tail -n +3 | xargs -r rm -f
echo "image built ($SUITE, key $IKEY): base $((t1-t0)) s, image $((SECONDS-t1)) s, $(du -h "$IMGDIR/rootfs.img" | cut -f1) used -> $IMGDIR" >&2
echo "$IMGDIR"
