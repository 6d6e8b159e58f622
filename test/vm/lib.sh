# shellcheck shell=bash
# Shared settings for the test-lab scripts (sourced, not executed).
# Env: SB_VM_CACHE (/var/tmp/sessionbrake-vm: every large artifact lives there)
#      SB_VM_SUITE (bookworm = Debian 12, the default; trixie = Debian 13): which guest
#      SB_VM_APPEND (extra kernel command line, e.g. psi=0; after the lab's own arguments)
#      SB_VM_IMAGE (image dir; default $SB_VM_CACHE/current-$SB_VM_SUITE, set by build-image.sh)
#      SB_VM_ACCEL (tcg by default; kvm where the host's KVM boots a stock kernel, see README)
#      SB_VM_SMP (2) SB_VM_MEM (2048 MiB) SB_VM_PROJ_RW=1 (project share writable; default read-only)
#      SB_VM_PROJ_CACHE (9p cache mode of the project share: loose = 2-4x faster node start/require,
#        but host edits made after boot may not be seen; vm-start.sh background mode defaults to none)
CACHE="${SB_VM_CACHE:-/var/tmp/sessionbrake-vm}"
SUITE="${SB_VM_SUITE:-bookworm}"
IMAGE="${SB_VM_IMAGE:-$CACHE/current-$SUITE}"
ACCEL="${SB_VM_ACCEL:-tcg}"
SMP="${SB_VM_SMP:-2}"
MEM="${SB_VM_MEM:-2048}"
PROJ_CACHE="${SB_VM_PROJ_CACHE:-loose}"   # (vm-start.sh overrides the default)

sbvm_suite_ok() {
  case "$SUITE" in bookworm|trixie) ;; *) echo "SB_VM_SUITE=$SUITE: not a lab guest (bookworm, trixie)" >&2; exit 2;; esac
}

# Install missing host tools (we run as root in CI; a developer without root gets apt's error).
sbvm_host_deps() {
  local miss=() c
  for c in qemu-system-x86_64:qemu-system-x86 qemu-img:qemu-utils mmdebstrap:mmdebstrap \
           mkfs.ext4:e2fsprogs zstd:zstd setpriv:util-linux flock:util-linux; do
    command -v "${c%%:*}" >/dev/null 2>&1 || miss+=("${c#*:}")
  done
  ((${#miss[@]})) || return 0
  echo "+ apt-get install ${miss[*]}" >&2
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${miss[@]}" >/dev/null
}

sbvm_check_image() {
  local f
  for f in vmlinuz initrd.img rootfs.img; do
    [[ -s "$IMAGE/$f" ]] || { echo "missing $IMAGE/$f: run test/vm/build-image.sh first" >&2; return 2; }
  done
}

# sbvm_qemu_argv SHARE PROJDIR|"" EXTRA_KERNEL_CMDLINE  -> sets the array QEMU_ARGV
# (the kernel command line ends with $SB_VM_APPEND, the user's extra arguments)
sbvm_qemu_argv() {
  local share="$1" proj="$2" xappend="$3" accel ro=ro
  # shellcheck disable=SC2054   # the commas are qemu's
  case "$ACCEL" in
    kvm) accel=(-accel kvm -cpu host);;
    *)   accel=(-accel tcg,thread=multi,tb-size=256 -cpu "${SB_VM_CPU:-max}");;
  esac
  # SB_VM_APPEND comes last: for a parameter given twice (psi=1 ... psi=0) the kernel keeps the last
  local append="console=ttyS0 root=/dev/vda rw quiet loglevel=4 systemd.unified_cgroup_hierarchy=1 psi=1 panic=-1 systemd.show_status=false lab.runner=1${xappend:+ $xappend}"
  # snapshot=on: guest writes go to a throw-away overlay, the image stays pristine
  QEMU_ARGV=(qemu-system-x86_64 -nodefaults -no-user-config -nographic -no-reboot
    "${accel[@]}" -smp "$SMP" -m "$MEM" -M pc
    -kernel "$IMAGE/vmlinuz" -initrd "$IMAGE/initrd.img"
    -drive "file=$IMAGE/rootfs.img,if=virtio,format=raw,snapshot=on,cache=unsafe"
    -virtfs "local,path=$share,mount_tag=lab,security_model=none,id=lab"
    -device virtio-rng-pci -nic none
    -serial "file:$share/console.log" -monitor none)
  if [[ -n "$proj" ]]; then
    # (if/else, not `a && b`: under `set -e` a false test would end the caller's script)
    local readonly_opt=,readonly=on
    if [[ -n "${SB_VM_PROJ_RW:-}" ]]; then ro=rw readonly_opt=""; fi
    QEMU_ARGV+=(-virtfs "local,path=$proj,mount_tag=proj,security_model=none,id=proj$readonly_opt")
    append+=" lab.proj=$ro lab.projcache=$PROJ_CACHE"
  fi
  QEMU_ARGV+=(-append "$append${SB_VM_APPEND:+ $SB_VM_APPEND}")
}
