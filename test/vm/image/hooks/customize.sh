#!/bin/sh
# mmdebstrap customize hook ($1 = guest root). Changing this file rebuilds the base tarball.
set -eu
R="$1"
echo lab >"$R/etc/hostname"
chroot "$R" useradd -m -s /bin/bash -u 1000 tester
chroot "$R" passwd -d root >/dev/null
# linger: user@1000.service (the user manager + user bus) starts at boot
mkdir -p "$R/var/lib/systemd/linger" && touch "$R/var/lib/systemd/linger/tester"
# systemd-oomd is there for benchmarks to unmask + start on demand. Masked: Debian ships
# ManagedOOMMemoryPressure=kill (50%, 20 s) on user@.service, which would kill the tests' memory hogs.
ln -sf /dev/null "$R/etc/systemd/system/systemd-oomd.service"
ln -sf /dev/null "$R/etc/systemd/system/systemd-oomd.socket"
# the other compared OOM daemons and the Prometheus server (only its promtool is used) stay masked too;
# node_exporter is installed but not started at boot: the metrics test points it at sbd's textfile and starts it
for u in earlyoom.service nohang.service nohang-desktop.service prometheus.service; do
  ln -sf /dev/null "$R/etc/systemd/system/$u"
done
rm -f "$R"/etc/systemd/system/multi-user.target.wants/prometheus-node-exporter.service
# small initrd with just what a virtio guest needs to mount its root
printf 'MODULES=list\nCOMPRESS=zstd\n' >"$R/etc/initramfs-tools/conf.d/lab.conf"
printf '%s\n' virtio_pci virtio_blk virtio_net virtio_console ext4 9p 9pnet_virtio >>"$R/etc/initramfs-tools/modules"
# drop modules and docs a headless virtio guest never needs (smaller tar, faster mkfs)
for k in "$R"/usr/lib/modules/*; do
  for d in drivers/gpu drivers/media drivers/net/wireless drivers/net/ethernet drivers/infiniband \
           drivers/iio drivers/usb drivers/staging drivers/hwmon drivers/bluetooth drivers/input/touchscreen \
           drivers/isdn drivers/mtd drivers/platform sound net/wireless net/mac80211 net/bluetooth; do
    rm -rf "$k/kernel/$d"
  done
  chroot "$R" depmod "$(basename "$k")"
done
rm -rf "$R"/usr/share/doc/* "$R"/usr/share/man/* "$R"/usr/share/info/*
find "$R"/usr/share/locale -mindepth 1 -maxdepth 1 ! -name locale.alias -exec rm -rf {} +
chroot "$R" update-initramfs -u -k all
rm -rf "$R"/var/cache/apt/archives/*.deb "$R"/var/lib/apt/lists/*
