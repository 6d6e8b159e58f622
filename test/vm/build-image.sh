#!/usr/bin/env bash
# Build (or reuse) the Debian 12 guest image of the test lab. Prints the image directory on stdout;
# progress goes to stderr. Everything lives under $SB_VM_CACHE (default /var/tmp/sessionbrake-vm):
#   base-KEY.tar   mmdebstrap output; KEY = hash(image/packages.txt, image/hooks/*, apt sources)
#   img-KEY/       rootfs.img vmlinuz initrd.img; KEY = hash(base key, image/overlay/, this script, node -v)
#   current        symlink to the newest img-KEY (what the run scripts use by default)
# Builds go to temporary names and are renamed at the end, so a killed build leaves nothing that
# looks valid. Env: SB_VM_CACHE, SB_VM_SOURCES (apt sources file; default the host's),
# SB_VM_NODE (node binary to copy; default `command -v node`), SB_VM_IMG_SIZE (3G).
set -euo pipefail
HERE="$(cd "$(dirname "$0")" && pwd)"
. "$HERE/lib.sh"
IMG_SIZE="${SB_VM_IMG_SIZE:-3G}"
mkdir -p "$CACHE"
exec 9>"$CACHE/.build.lock"; flock 9          # one build at a time per cache
rm -rf "$CACHE"/*.tmp.*                        # leftovers of killed builds (we hold the lock)
sbvm_host_deps

SOURCES="${SB_VM_SOURCES:-}"
for f in /etc/apt/sources.list.d/debian.sources /etc/apt/sources.list; do
  [[ -z "$SOURCES" && -s "$f" ]] && SOURCES="$f"
done
[[ -n "$SOURCES" ]] || { echo "no apt sources found: set SB_VM_SOURCES" >&2; exit 2; }
NODE_BIN="$(readlink -f "${SB_VM_NODE:-$(command -v node)}")"
NPM_DIR="$(dirname "$NODE_BIN")/../lib/node_modules/npm"

# hash of file names + contents + modes under a directory (or of single files)
tree_hash() {
  (cd "$1" && find . -type f -printf '%p %m\n' | sort | while read -r p m; do echo "$p $m $(sha256sum <"$p")"; done | sha256sum | cut -c1-16)
}
PKGS="$(sed 's/#.*//' "$HERE/image/packages.txt" | xargs)"
BKEY=$( { echo "$PKGS"; tree_hash "$HERE/image/hooks"; cat "$SOURCES"; } | sha256sum | cut -c1-16)
IKEY=$( { echo "$BKEY"; tree_hash "$HERE/image/overlay"; cat "$0"; "$NODE_BIN" --version; } | sha256sum | cut -c1-16)
BASE="$CACHE/base-$BKEY.tar" IMGDIR="$CACHE/img-$IKEY"

if [[ -s "$IMGDIR/rootfs.img" ]]; then
  echo "image cached (key $IKEY, base $BKEY): $IMGDIR" >&2
  ln -sfn "img-$IKEY" "$CACHE/current.tmp.$$" && mv -T "$CACHE/current.tmp.$$" "$CACHE/current"
  echo "$IMGDIR"; exit 0
fi

t0=$SECONDS
if [[ -s "$BASE" ]]; then
  echo "+ base cached (key $BKEY)" >&2
else
  echo "+ mmdebstrap bookworm -> $BASE (~1-2 min)" >&2
  # --format=tar: mmdebstrap would otherwise guess the format from the (temporary) file name
  mmdebstrap --variant=minbase --mode=root --format=tar --quiet \
    --aptopt='APT::Install-Recommends "false"' --include="${PKGS// /,}" \
    --customize-hook="sh $(printf %q "$HERE/image/hooks/customize.sh") \"\$1\"" \
    bookworm "$BASE.tmp.$$" "$SOURCES"
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
cp -a "$HERE/image/overlay/." "$root/"
ln -sf /etc/systemd/system/lab-runner.service "$root/etc/systemd/system/multi-user.target.wants/"
for u in e2scrub_reap.service e2scrub_all.timer fstrim.timer apt-daily.timer apt-daily-upgrade.timer; do
  ln -sf /dev/null "$root/etc/systemd/system/$u"     # mask: nothing here needs them, boot is slow enough
done
mkdir -p "$root/mnt/lab" "$root/mnt/proj"
truncate -s "$IMG_SIZE" "$tmp/rootfs.img"
mkfs.ext4 -q -F -L labroot -E root_owner=0:0 -d "$root" "$tmp/rootfs.img"
rm -rf "$root"
echo "$IKEY base=$BKEY node=$("$NODE_BIN" --version) built=$(date -u +%FT%TZ)" >"$tmp/key"
mv -T "$tmp" "$IMGDIR"                                  # the image becomes valid only here
ln -sfn "img-$IKEY" "$CACHE/current.tmp.$$" && mv -T "$CACHE/current.tmp.$$" "$CACHE/current"
# keep the two newest of each kind (a second checkout with other keys does not thrash at once)
ls -1dt "$CACHE"/img-* | tail -n +3 | xargs -r rm -rf
ls -1dt "$CACHE"/base-*.tar | tail -n +3 | xargs -r rm -f
echo "image built (key $IKEY): base $((t1-t0)) s, image $((SECONDS-t1)) s, $(du -h "$IMGDIR/rootfs.img" | cut -f1) used -> $IMGDIR" >&2
echo "$IMGDIR"
