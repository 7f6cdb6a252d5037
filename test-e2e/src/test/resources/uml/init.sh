#!/bin/sh
# Init (PID 1) of the lvmqos real-kernel test bed: a user-mode-Linux guest, or a qemu guest.
#
# The host harness (io.lvmqos.e2e.uml.UmlGuest) boots linux.uml with the host's / as a read-only hostfs
# root and this script as init=. It names a parameters file in LVMQOS_PARAMS, an unknown key=value on
# the kernel command line, which the kernel hands to init as an environment variable. The file lives in
# the host's run directory, visible here read-only at the same absolute path.
#
# The qemu harness (io.lvmqos.e2e.qemu.QemuGuest) boots Debian's stock kernel with an initramfs
# (scripts/qemu.sh) that mounts the host's / read-only over 9p and switch_roots into this script, with
# LVMQOS_GUEST_KIND=qemu and LVMQOS_PARAMS on the kernel command line. What differs is marked where it
# happens below: the host's /tmp and the out directory are 9p exports rather than hostfs, the modules
# are the kernel package's (LVMQOS_QEMU_MODULES, loaded by modprobe, which the kernel also uses for
# what it loads by itself), and the end is a power-off, which ends qemu, rather than a halt.
#
# A qemu guest may have systemd as PID 1 (QemuGuest.Builder.systemd): the initramfs then makes the root
# an overlay and systemd runs this script as a oneshot service with LVMQOS_INIT_SYSTEM=systemd. It
# leaves alone what systemd mounted (/proc, /sys, /dev, /run and the cgroup2 tree), and powers off the
# same way; everything else is as in the other guests.
#
# Every stage prints "LVMQOS-STAGE <stage> start", then "... ok" or "... failed: <why>" on the console,
# so the host can tell a boot failure from a module, volume group, cgroup or payload failure. Whatever
# happens, the script ends in a halt: if PID 1 exits the kernel panics, and if it blocks only the host's
# timeout ends the run, so on any failure it says why and halts at once.
#
# This is test-bed code: running the host's payload with `sh -c` is intended here, never in the driver.

PATH=/usr/sbin:/usr/bin:/sbin:/bin
LC_ALL=C
export PATH LC_ALL
OUT_READY=0
LVMQOS_GUEST_KIND=${LVMQOS_GUEST_KIND:-uml}
LVMQOS_INIT_SYSTEM=${LVMQOS_INIT_SYSTEM:-none}
# qemu's 9p transport: a large message size, because the guest reads and writes host files through it.
NINEP_OPTIONS=trans=virtio,version=9p2000.L,msize=512000

marker() {
    echo "LVMQOS-STAGE $*"
    if [ "$OUT_READY" = 1 ]; then echo "LVMQOS-STAGE $*" >> "$LVMQOS_OUT/stages.log"; fi
}

uptime_s() {
    read -r up _ < /proc/uptime 2>/dev/null && echo "$up"
}

halt_now() {
    # hostfs caches writes in the guest's page cache: without this sync the host may miss the last lines.
    sync
    if [ "$LVMQOS_GUEST_KIND" = qemu ]; then
        # qemu ends when the guest powers off (ACPI); a halted guest would keep it running until the timeout.
        poweroff -f > /dev/null 2>&1
    else
        # No init system runs here, so halt -f calls reboot(2) itself; -d because the root cannot take a wtmp record.
        halt -f -d > /dev/null 2>&1 || poweroff -f > /dev/null 2>&1
    fi
    # Still running: magic SysRq 'o' powers off. Failing even that, PID 1 exiting panics the kernel,
    # which ends UML too.
    echo o > /proc/sysrq-trigger 2> /dev/null
    sleep 5
    exit 1
}

# fail <stage> <detail>: the one way out of a failed stage.
fail() {
    marker "$1 failed: $(printf '%s' "$2" | tr '\n' ' ')"
    if [ "$OUT_READY" = 1 ]; then printf '%s\n' "$1" > "$LVMQOS_OUT/failed-stage"; fi
    halt_now
}

# run <stage> <command> [args]: runs a command, shows its output, and fails the stage with the command
# line and its output if it fails.
run() {
    run_stage=$1
    shift
    if ! run_output=$("$@" 2>&1); then fail "$run_stage" "$* -> $run_output"; fi
    if [ -n "$run_output" ]; then printf '%s\n' "$run_output"; fi
}

# Which kernel this is, in every guest's console log: the host chooses it per machine (scripts/lib.sh).
marker "init start kernel=$(uname -r) $(uname -v)"

marker "mounts start"
mountpoint -q /proc || run mounts mount -t proc proc /proc
mountpoint -q /sys || run mounts mount -t sysfs sysfs /sys
# This kernel mounts devtmpfs on /dev by itself (DEVTMPFS_MOUNT), or qemu's initramfs moved its own
# here; mount it only where neither did.
mountpoint -q /dev || run mounts mount -t devtmpfs devtmpfs /dev
if ! mountpoint -q /dev/shm; then
    run mounts mkdir -p /dev/shm
    run mounts mount -t tmpfs -o mode=1777 shm /dev/shm
fi
# The root is read-only: everything that writes (LVM's locks, cgroup mount points) goes to /run.
# /tmp is the host's own /tmp, writable: a checkout cloned under /tmp (as CI may do) must stay
# visible at the same paths, since the classpath and the run directory are absolute host paths.
if [ "$LVMQOS_GUEST_KIND" = qemu ]; then
    run mounts mount -t 9p -o "$NINEP_OPTIONS" tmp /tmp
else
    run mounts mount -t hostfs -o /tmp hosttmp /tmp
fi
# Under systemd, /run is its tmpfs already, holding its and D-Bus's sockets: never mounted over.
mountpoint -q /run || run mounts mount -t tmpfs -o mode=755 run /run
marker "mounts ok init-system=$LVMQOS_INIT_SYSTEM"

marker "params start"
if [ -z "$LVMQOS_PARAMS" ] || [ ! -r "$LVMQOS_PARAMS" ]; then
    fail params "cannot read parameters file '$LVMQOS_PARAMS' (a run directory under /run is hidden by the guest's tmpfs)"
fi
. "$LVMQOS_PARAMS" || fail params "cannot source $LVMQOS_PARAMS"
marker "params ok"

# The run's output directory, writable, at the same absolute path as on the host: a path a guest test
# prints is a path the host can open.
marker "out start"
if [ "$LVMQOS_GUEST_KIND" = qemu ]; then
    run out mount -t 9p -o "$NINEP_OPTIONS" out "$LVMQOS_OUT"
else
    run out mount -t hostfs hostfs "$LVMQOS_OUT" -o "$LVMQOS_OUT"
fi
run out touch "$LVMQOS_OUT/stages.log"
OUT_READY=1
marker "out ok $LVMQOS_OUT"

marker "modules start"
if [ "$LVMQOS_GUEST_KIND" = qemu ]; then
    # The kernel package's unpacked lib/modules/<release> (scripts/qemu.sh), not the host's /lib/modules.
    LVMQOS_MODULE_DIR=$LVMQOS_QEMU_MODULES
    if [ ! -r "$LVMQOS_MODULE_DIR/modules.dep" ] || [ "${LVMQOS_MODULE_DIR##*/}" != "$(uname -r)" ]; then
        fail modules "no $LVMQOS_MODULE_DIR/modules.dep for kernel $(uname -r): set LVMQOS_QEMU_MODULES to its lib/modules/<release>"
    fi
    # The kernel asks /sbin/modprobe for what it needs later (ext4 and xfs at mount, crc32c for
    # libcrc32c), and modprobe looks under /lib/modules: point the kernel at one that looks here.
    run modules mkdir -p /run/lvmqos-init
    printf '#!/bin/sh\nexec /sbin/modprobe -d %s "$@"\n' "${LVMQOS_MODULE_DIR%/lib/modules/*}" > /run/lvmqos-init/modprobe ||
        fail modules "cannot write /run/lvmqos-init/modprobe"
    run modules chmod 755 /run/lvmqos-init/modprobe
    echo /run/lvmqos-init/modprobe > /proc/sys/kernel/modprobe || fail modules "cannot set /proc/sys/kernel/modprobe"
else
    # The host names the kernel's module directory (LVMQOS_UML_MODULES: the one holding modules.dep, or
    # its parent with a directory per release); without it, the system's user-mode-linux package's.
    LVMQOS_MODULE_DIR=${LVMQOS_UML_MODULES:-/usr/lib/uml/modules}
    [ -r "$LVMQOS_MODULE_DIR/modules.dep" ] || LVMQOS_MODULE_DIR=$LVMQOS_MODULE_DIR/$(uname -r)
    if [ ! -r "$LVMQOS_MODULE_DIR/modules.dep" ]; then
        fail modules "no $LVMQOS_MODULE_DIR/modules.dep: the module directory does not fit kernel $(uname -r); set LVMQOS_UML_MODULES to its modules"
    fi
fi
command -v insmod > /dev/null || fail modules "insmod not found: apt-get install kmod"
LOADED=" "
# load_module <name>: insmods a module after its dependencies. modules.dep lists them so that the last
# must load first (modprobe walks the list right to left); there is no modprobe here because the
# modules are not under /lib/modules.
load_module() {
    dep_line=$(grep -m 1 "/$1\.ko:" "$LVMQOS_MODULE_DIR/modules.dep")
    if [ -z "$dep_line" ]; then
        grep -q "/$1\.ko\$" "$LVMQOS_MODULE_DIR/modules.builtin" && return 0
        fail modules "module $1 is not in $LVMQOS_MODULE_DIR/modules.dep"
    fi
    load_order=""
    for dep in ${dep_line#*:}; do load_order="$dep $load_order"; done
    for module in $load_order ${dep_line%%:*}; do
        case "$LOADED" in *" $module "*) continue ;; esac
        run modules insmod "$LVMQOS_MODULE_DIR/$module"
        LOADED="$LOADED$module "
    done
}
if [ "$LVMQOS_GUEST_KIND" = qemu ]; then
    # One modprobe for them all, softdeps included: under software emulation every process costs
    # (a third of a second each for insmod and grep; measured 3.1 s for the loop below, 1.1 s for this).
    run modules /run/lvmqos-init/modprobe -a dm-mod dm-bufio dm-bio-prison dm-persistent-data dm-thin-pool dm-snapshot \
        $LVMQOS_EXTRA_MODULES
else
    for name in dm-mod dm-bufio dm-bio-prison dm-persistent-data dm-thin-pool dm-snapshot $LVMQOS_EXTRA_MODULES; do
        load_module "$name"
    done
fi
marker "modules ok"

# No udev, no dmeventd, a read-only /etc: LVM must create device nodes itself, keep no backups and lock
# under /run. The config goes in a directory of its own and LVM_SYSTEM_DIR stays exported, so every
# later lvm call (the payload's, and the driver's, which inherits the environment) uses it.
marker "lvm start"
LVM_SYSTEM_DIR=/run/lvm-system
LVM_SUPPRESS_FD_WARNINGS=1
export LVM_SYSTEM_DIR LVM_SUPPRESS_FD_WARNINGS
run lvm mkdir -p "$LVM_SYSTEM_DIR" /run/lock/lvm /run/lvm
cat > "$LVM_SYSTEM_DIR/lvm.conf" << 'EOF' || fail lvm "cannot write $LVM_SYSTEM_DIR/lvm.conf"
# Written by the lvmqos UML guest's init.
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
EOF
lvm_version=$(lvm version 2>&1)
case "$lvm_version" in
    *"Driver version"*) ;;
    *) fail lvm "lvm does not see device-mapper: $lvm_version" ;;
esac
marker "lvm ok"

marker "disks start"
for disk in $LVMQOS_DISKS; do
    [ -b "$disk" ] || fail disks "$disk is not a block device"
done
marker "disks ok $LVMQOS_DISKS"

marker "vg start"
vg_index=0
while [ "$vg_index" -lt "${LVMQOS_VG_COUNT:-0}" ]; do
    eval "vg_name=\$LVMQOS_VG_${vg_index}_NAME vg_pvs=\$LVMQOS_VG_${vg_index}_PVS"
    eval "pool_name=\$LVMQOS_VG_${vg_index}_THIN_POOL pool_size=\$LVMQOS_VG_${vg_index}_THIN_POOL_SIZE"
    if [ "$LVMQOS_REUSE_DISKS" = 1 ]; then
        # Booting again on an earlier run's disks: the group is there already. Nothing is activated,
        # as on a node whose plugin container has no udev to autoactivate it (vgs activates nothing).
        run vg vgs --noheadings -o vg_name "$vg_name"
        vg_index=$((vg_index + 1))
        continue
    fi
    # $vg_pvs is a space-separated device list: split on purpose.
    run vg pvcreate -q -y $vg_pvs
    run vg vgcreate -q "$vg_name" $vg_pvs
    if [ -n "$pool_name" ]; then
        case "$pool_size" in *%*) size_option=-l ;; *) size_option=-L ;; esac
        # -Z y: zero blocks on first provisioning, so a new thin volume never shows another's old data.
        run vg lvcreate -q -y --type thin-pool -Z y "$size_option" "$pool_size" -n "$pool_name" "$vg_name"
    fi
    vg_index=$((vg_index + 1))
done
marker "vg ok $LVMQOS_VGS"

marker "cgroup start"
cgroup_root=${LVMQOS_CGROUP_ROOT:-/sys/fs/cgroup}
case "${LVMQOS_CGROUP_MODE:-none}" in
    v2)
        [ -d "$cgroup_root" ] || run cgroup mkdir -p "$cgroup_root"
        # systemd mounts the unified tree itself, and owns the root's controllers from then on
        if [ "$LVMQOS_INIT_SYSTEM" != systemd ] || ! mountpoint -q "$cgroup_root"; then
            run cgroup mount -t cgroup2 cgroup2 "$cgroup_root"
        fi
        # io gives io.max to the children; memory too, because cgroup v2 attributes (and so throttles)
        # buffered writeback only where both controllers are on. A guest may ask for more (+cpu +pids).
        controllers=${LVMQOS_CGROUP_CONTROLLERS:-+io +memory}
        echo "$controllers" 2> /tmp/cgroup.err > "$cgroup_root/cgroup.subtree_control" ||
            fail cgroup "cannot enable $controllers in $cgroup_root/cgroup.subtree_control: $(cat /tmp/cgroup.err)"
        grep -qw io "$cgroup_root/cgroup.controllers" ||
            fail cgroup "no io controller in $cgroup_root/cgroup.controllers: $(cat "$cgroup_root/cgroup.controllers")"
        ;;
    v1)
        # The v1 layout: a tmpfs holding one directory per hierarchy, blkio the only one mounted.
        [ -d "$cgroup_root" ] || run cgroup mkdir -p "$cgroup_root"
        run cgroup mount -t tmpfs -o mode=755 cgroup "$cgroup_root"
        run cgroup mkdir "$cgroup_root/blkio"
        run cgroup mount -t cgroup -o blkio blkio "$cgroup_root/blkio"
        ;;
    none) ;;
    *) fail cgroup "unknown cgroup mode '$LVMQOS_CGROUP_MODE'" ;;
esac
marker "cgroup ok ${LVMQOS_CGROUP_MODE:-none} $cgroup_root"

# Without lo up, Netty (the driver's gRPC transport) logs a stack trace about missing interfaces.
marker "network start"
run network ip link set lo up
marker "network ok"

# What the payload (and a guest-side JUnit class) learns about the guest. The payload's own variables
# come last so that a test can override any of these.
LVMQOS_GUEST=1
LVMQOS_CGROUP_ROOT=$cgroup_root
HOME=/tmp
export LVMQOS_GUEST LVMQOS_GUEST_KIND LVMQOS_OUT LVMQOS_RUN_DIR LVMQOS_DISKS LVMQOS_VGS LVMQOS_VG LVMQOS_THIN_POOL \
    LVMQOS_THIN_POOLS LVMQOS_CGROUP_MODE LVMQOS_CGROUP_ROOT LVMQOS_MODULE_DIR LVMQOS_INIT_SYSTEM HOME
# The kernel passes every unknown key=value of its command line to init: UML's own, and the initramfs's.
unset mem uml_dir LVMQOS_INIT
if [ -n "$LVMQOS_PAYLOAD_ENV" ]; then
    . "$LVMQOS_PAYLOAD_ENV" || fail payload "cannot source $LVMQOS_PAYLOAD_ENV"
fi

marker "payload start uptime=$(uptime_s)"
cd /tmp || fail payload "no /tmp"
# The payload writes to a file and `tail` mirrors it on the console, rather than a pipe through tee: a
# daemon the payload leaves running would hold a pipe open and keep this script waiting forever.
# The file exists before either starts: tail would otherwise race the shell's redirection, lose, and
# mirror nothing (seen once under seccomp, whose faster start let tail open the file first).
: > "$LVMQOS_OUT/payload.log" || fail payload "cannot create $LVMQOS_OUT/payload.log"
sh -c "$LVMQOS_PAYLOAD" < /dev/null >> "$LVMQOS_OUT/payload.log" 2>&1 &
payload_pid=$!
tail -n +1 -s 0.2 -f --pid="$payload_pid" "$LVMQOS_OUT/payload.log" &
tail_pid=$!
wait "$payload_pid"
payload_exit=$?
wait "$tail_pid"
printf '%s\n' "$payload_exit" > "$LVMQOS_OUT/exit-code"
marker "payload exit $payload_exit uptime=$(uptime_s)"
halt_now
