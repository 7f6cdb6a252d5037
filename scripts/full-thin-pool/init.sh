#!/bin/sh
# Init of scripts/full-thin-pool/measure's guest: device-mapper and LVM as the test bed's init sets
# them up (test-e2e/src/test/resources/uml/init.sh, which this does not share: that one needs the
# harness's parameters), then the payload, then a halt.
PATH=/usr/sbin:/usr/bin:/sbin:/bin
LC_ALL=C
export PATH LC_ALL
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mountpoint -q /dev || mount -t devtmpfs devtmpfs /dev
mount -t hostfs -o /tmp hosttmp /tmp
mount -t tmpfs run /run
load() {
    line=$(grep -m 1 "/$1\.ko:" "$MODULES/modules.dep") || return 0
    order=""
    for dep in ${line#*:}; do order="$dep $order"; done
    for module in $order ${line%%:*}; do insmod "$MODULES/$module" 2> /dev/null; done
}
for name in dm-mod dm-thin-pool xfs; do load "$name"; done
LVM_SYSTEM_DIR=/run/lvm
LVM_SUPPRESS_FD_WARNINGS=1
export LVM_SYSTEM_DIR LVM_SUPPRESS_FD_WARNINGS
mkdir -p /run/lvm /run/lock/lvm
cat > /run/lvm/lvm.conf << 'CONF'
activation {
    udev_sync = 0
    udev_rules = 0
    monitoring = 0
}
devices {
    obtain_device_list_from_udev = 0
    use_devicesfile = 0
}
backup {
    backup = 0
    archive = 0
}
global {
    locking_dir = "/run/lock/lvm"
}
CONF
sh "$PAYLOAD" 2>&1
sync
halt -f -d > /dev/null 2>&1 || poweroff -f > /dev/null 2>&1
echo o > /proc/sysrq-trigger
sleep 5
