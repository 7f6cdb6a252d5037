# The second kind of test node: Debian's stock kernel under qemu's software emulation. Sourced after
# scripts/lib.sh (it uses lvmqos_apt_private, lvmqos_uml_apt and LVMQOS_SCRIPTS_DIR), not executed.
#
# User-mode Linux has no io.cost, io.latency, BFQ group scheduling or PSI; the kernel of this machine's
# own Debian suite (linux-image-amd64: 6.1 on Debian 12) has them all. It boots under
# `qemu-system-x86_64 -accel tcg` (these machines have no usable KVM), with a small initramfs made here
# from busybox-static and the kernel's own virtio and 9p modules: it mounts the host's / read-only over
# 9p (virtfs export tag "root") and switch_roots into it, running the init named by LVMQOS_INIT on the
# kernel command line. So the guest sees the host's JDK, lvm2, fio and the test class path, as the UML
# guest does.
#
# The kernel package is fetched once with apt-get download, through the archive URI this machine's own
# apt sources name (with apt's signature checks) and a private apt configuration, and unpacked with
# dpkg -x into $LVMQOS_QEMU_CACHE/<package version>/root; it is never installed: /boot and /lib/modules
# are not touched. depmod -b writes its modules.dep there. Every use is proven first by a probe boot.
#
# lvmqos_pick_qemu exports LVMQOS_QEMU_KERNEL (the kernel, uncompressed), LVMQOS_QEMU_INITRD (the initramfs),
# LVMQOS_QEMU_MODULES (the unpacked lib/modules/<release>, holding modules.dep) and
# LVMQOS_QEMU_RELEASE (uname -r in the guest). LVMQOS_SKIP_QEMU=1 skips it (the qemu tests then abort,
# never pass).

LVMQOS_QEMU_CACHE=${LVMQOS_QEMU_CACHE:-/var/cache/lvmqos/qemu}
LVMQOS_QEMU_PROBE_TIMEOUT=${LVMQOS_QEMU_PROBE_TIMEOUT:-120}
# LVMQOS_QEMU_KEEP_PROBE=1 keeps the probe boot's directory under /tmp (its console), to see why it failed.
LVMQOS_QEMU_PACKAGES="qemu-system-x86 busybox-static kmod xz-utils"
# What the initramfs loads to reach the root over 9p; their dependencies come from modules.dep.
# overlay: the root of a guest whose init is systemd is an overlay of a tmpfs over the 9p root.
LVMQOS_QEMU_INITRD_MODULES="virtio virtio_ring virtio_pci virtio_blk netfs fscache 9pnet 9pnet_virtio 9p overlay"
# What the initramfs's /init can do; a cached initramfs of another version is made again (lvmqos_qemu_initrd_current).
# 2: the systemd handover (LVMQOS_SYSTEMD=1).
LVMQOS_QEMU_INITRD_VERSION=3
# 9p mount options of the root: a large message size and the page cache, because the guest reads the
# JDK and the class path through it under software emulation. The root is read-only and the host does
# not change it while a guest runs, so caching it loosely is safe; /tmp and the out directory, which
# host and guest both write, are mounted without a cache by the guest's init.
LVMQOS_QEMU_ROOT_OPTIONS="trans=virtio,version=9p2000.L,msize=512000,cache=loose,ro"

# The machine's own Debian suite (bookworm on Debian 12): its kernel is the one tested.
lvmqos_qemu_suite() {
  if [ -n "${LVMQOS_QEMU_SUITE:-}" ]; then echo "$LVMQOS_QEMU_SUITE"; return 0; fi
  (. /etc/os-release 2>/dev/null && echo "${VERSION_CODENAME:-}")
}

# lvmqos_qemu_packages: qemu-system-x86 and busybox-static installed, or one line saying what to install.
lvmqos_qemu_packages() {
  qemu_missing=""
  for pkg in $LVMQOS_QEMU_PACKAGES; do
    dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed" || qemu_missing="$qemu_missing $pkg"
  done
  [ -z "$qemu_missing" ] && return 0
  if [ "$(id -u)" -ne 0 ]; then
    echo "packages$qemu_missing are missing: apt-get install$qemu_missing (as root)"
    return 1
  fi
  echo "installing:$qemu_missing" >&2
  # Another apt may hold the lock (an image build, an unattended upgrade): wait for it rather than fail.
  if ! qemu_out=$(DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=600 update -qq 2>&1 &&
      DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=600 install -y -qq --no-install-recommends \
        $qemu_missing 2>&1); then
    echo "apt-get install$qemu_missing failed: $(printf '%s' "$qemu_out" | grep -E '^(E|W):' | head -n 2 | tr '\n' ' ')"
    return 1
  fi
}

# lvmqos_qemu_module_files MODULES NAME...: prints, one a line and each once, the .ko files (relative to
# MODULES, the directory holding modules.dep) that load NAME... in an order insmod accepts: every
# module after its dependencies. A module built into the kernel (modules.builtin) prints nothing; one
# that is neither prints "missing NAME" and returns 1.
lvmqos_qemu_module_files() {
  mf_dir=$1; shift
  mf_done=" "
  for mf_name in "$@"; do
    # A module's file may spell '_' as '-' or the other way round (virtio_pci.ko, dm-mod.ko).
    mf_alt=$(printf '%s' "$mf_name" | tr '_-' '-_')
    mf_line=$(grep -m 1 -E "(^|/)($mf_name|$mf_alt)\.ko:" "$mf_dir/modules.dep")
    if [ -z "$mf_line" ]; then
      grep -q -E "(^|/)($mf_name|$mf_alt)\.ko\$" "$mf_dir/modules.builtin" && continue
      echo "missing $mf_name"; return 1
    fi
    # modules.dep lists a module's dependencies so that the last must load first.
    mf_order=""
    for mf_dep in ${mf_line#*:}; do mf_order="$mf_dep $mf_order"; done
    for mf_file in $mf_order ${mf_line%%:*}; do
      case "$mf_done" in *" $mf_file "*) continue ;; esac
      echo "$mf_file"
      mf_done="$mf_done$mf_file "
    done
  done
}

# lvmqos_qemu_vmlinux BZIMAGE OUT: writes OUT, the kernel of BZIMAGE uncompressed (an ELF file that
# qemu boots by its PVH entry point). Under software emulation the bzImage's own decompression takes
# about 10 s of every boot; the ELF starts at once. On failure prints one line and returns 1.
lvmqos_qemu_vmlinux() {
  vm_in=$1 vm_out=$2
  # Debian compresses its kernels with xz; the stream starts somewhere after the boot stub.
  for vm_offset in $(LC_ALL=C grep -abo "$(printf '\3757zXZ')" "$vm_in" | cut -d: -f1); do
    if tail -c +$((vm_offset + 1)) "$vm_in" | xz -dc --single-stream > "$vm_out.partial" 2>/dev/null &&
        [ "$(od -An -c -N 4 "$vm_out.partial" | tr -d ' ')" = 177ELF ]; then
      mv "$vm_out.partial" "$vm_out"
      return 0
    fi
  done
  rm -f "$vm_out.partial"
  echo "no xz-compressed ELF kernel found in $vm_in"
  return 1
}

# lvmqos_qemu_initramfs ROOT RELEASE OUT: writes OUT, a gzip'd newc cpio: busybox-static, the modules
# that reach the root, and an /init that mounts the host's / over 9p and switch_roots into
# $LVMQOS_INIT. With LVMQOS_SYSTEMD=1 on the kernel command line, the new root is instead an overlay
# (the 9p root read-only below, a tmpfs above, so that systemd can write /etc and /var), and /init hands
# over to systemd as PID 1, which runs $LVMQOS_INIT as the one service of its default target (the
# payload's init then skips what systemd has mounted already). Writes OUT.version beside it.
# On failure prints one line saying why and returns 1.
lvmqos_qemu_initramfs() {
  ir_root=$1 ir_release=$2 ir_out=$3
  ir_modules=$ir_root/lib/modules/$ir_release
  ir_busybox=$(dpkg -L busybox-static 2>/dev/null | grep -m 1 -E '/s?bin/busybox$')
  [ -n "$ir_busybox" ] && [ -x "$ir_busybox" ] || { echo "no busybox from busybox-static: apt-get install busybox-static"; return 1; }
  ir_stage=$ir_out.d
  rm -rf "$ir_stage"
  mkdir -p "$ir_stage/bin" "$ir_stage/modules" "$ir_stage/dev" "$ir_stage/proc" "$ir_stage/sys" "$ir_stage/newroot" ||
    { echo "cannot write $ir_stage"; return 1; }
  cp "$ir_busybox" "$ir_stage/bin/busybox" || { echo "cannot copy $ir_busybox"; return 1; }
  for applet in sh mount umount insmod mkdir cat echo sleep switch_root poweroff uname ln mknod; do
    ln -s busybox "$ir_stage/bin/$applet"
  done
  ir_files=$(lvmqos_qemu_module_files "$ir_modules" $LVMQOS_QEMU_INITRD_MODULES) ||
    { echo "kernel $ir_release: $ir_files (not in its modules.dep or modules.builtin)"; return 1; }
  ir_index=10
  for ir_file in $ir_files; do
    # Numbered, so that the shell's glob in /init loads them in this order.
    cp "$ir_modules/$ir_file" "$ir_stage/modules/$ir_index-$(basename "$ir_file")" ||
      { echo "cannot copy $ir_modules/$ir_file"; return 1; }
    ir_index=$((ir_index + 1))
  done
  cat > "$ir_stage/init" << EOF || { echo "cannot write $ir_stage/init"; return 1; }
#!/bin/sh
# The lvmqos qemu guest's initramfs (made by scripts/qemu.sh for kernel $ir_release): loads virtio and
# 9p, mounts the host's / read-only over 9p (virtfs tag "root") and hands over to \$LVMQOS_INIT there,
# which the kernel passes from its command line. If anything fails, it says so and powers off, which
# ends qemu; it never drops to a shell, which would wait on a console nobody types on.
export PATH=/bin
mount -t devtmpfs devtmpfs /dev
exec < /dev/console > /dev/console 2>&1
fail() {
    echo "LVMQOS-STAGE init failed: initramfs: \$*"
    poweroff -f
    sleep 10
}
for module in /modules/*.ko; do
    out=\$(insmod "\$module" 2>&1) || fail "insmod \$module: \$out"
done
[ -n "\$LVMQOS_INIT" ] || fail "no LVMQOS_INIT=<path of the init> on the kernel command line"
if [ "\$LVMQOS_SYSTEMD" != 1 ]; then
    out=\$(mount -t 9p -o $LVMQOS_QEMU_ROOT_OPTIONS root /newroot 2>&1) ||
        fail "mount of the host's root over 9p (virtfs mount_tag=root): \$out"
    [ -x "/newroot\$LVMQOS_INIT" ] || fail "\$LVMQOS_INIT is not an executable file in the host's root"
    # The init finds a devtmpfs on /dev; it mounts /proc and /sys itself.
    mount --move /dev /newroot/dev || fail "cannot move /dev into the new root"
    exec switch_root /newroot "\$LVMQOS_INIT"
fi
# systemd as PID 1: it writes /etc, /var and the machine id, so the root is an overlay of a tmpfs over
# the host's read-only root. The lower and upper layers stay reachable under /run/lvmqos-root.
mkdir -p /layers
mount -t tmpfs -o mode=755 layers /layers || fail "cannot mount a tmpfs for the overlay's layers"
mkdir -p /layers/lower /layers/upper /layers/work
out=\$(mount -t 9p -o $LVMQOS_QEMU_ROOT_OPTIONS root /layers/lower 2>&1) ||
    fail "mount of the host's root over 9p (virtfs mount_tag=root): \$out"
[ -x "/layers/lower\$LVMQOS_INIT" ] || fail "\$LVMQOS_INIT is not an executable file in the host's root"
[ -x /layers/lower/lib/systemd/systemd ] || fail "no /lib/systemd/systemd in the host's root: apt-get install systemd"
out=\$(mount -t overlay -o lowerdir=/layers/lower,upperdir=/layers/upper,workdir=/layers/work root /newroot 2>&1) ||
    fail "cannot mount the overlay root: \$out"
# An empty machine id is a first boot's: systemd makes one up in memory. No fstab: nothing to mount
# but what systemd mounts itself. Units of the host's own (its services, timers, getty) would only
# slow the emulated boot: the default target is the test bed's, which wants dbus and the payload only.
units=/newroot/etc/systemd/system
mkdir -p "\$units" /newroot/etc
: > /newroot/etc/machine-id
: > /newroot/etc/fstab
cat > "\$units/lvmqos-payload.service" << UNIT || fail "cannot write the payload's unit"
[Unit]
Description=lvmqos test bed: the guest's init script and its payload
Wants=dbus.socket
After=basic.target dbus.socket
[Service]
Type=oneshot
Environment=LVMQOS_GUEST_KIND=\$LVMQOS_GUEST_KIND LVMQOS_PARAMS=\$LVMQOS_PARAMS LVMQOS_INIT_SYSTEM=systemd
ExecStart=\$LVMQOS_INIT
StandardOutput=tty
StandardError=tty
TTYPath=/dev/ttyS0
UNIT
cat > "\$units/lvmqos.target" << UNIT || fail "cannot write the test bed's target"
[Unit]
Description=lvmqos test bed
Requires=basic.target lvmqos-payload.service
After=basic.target
AllowIsolate=yes
UNIT
# No login prompt on the console the payload writes to.
ln -s /dev/null "\$units/serial-getty@ttyS0.service"
# The guest's /tmp becomes the host's own /tmp (init.sh mounts it), which the guest must never clean:
# no boot-time emptying of /tmp (it also took minutes over 9p) and no ageing timer.
mkdir -p /newroot/etc/tmpfiles.d
for conf in tmp.conf systemd-tmp.conf x11.conf; do ln -s /dev/null "/newroot/etc/tmpfiles.d/\$conf"; done
ln -s /dev/null "\$units/systemd-tmpfiles-clean.timer"
# The host's root may carry a container's marker (/.dockerenv); a whiteout hides it, or systemd would
# take this virtual machine for a container and behave as in one.
[ -e /layers/lower/.dockerenv ] && mknod /layers/upper/.dockerenv c 0 0
mount --move /dev /newroot/dev || fail "cannot move /dev into the new root"
exec switch_root /newroot /lib/systemd/systemd --unit=lvmqos.target
EOF
  chmod 755 "$ir_stage/init"
  (cd "$ir_stage" && find . | "$ir_busybox" cpio -o -H newc -R 0:0 2>/dev/null) | gzip -9 > "$ir_out.partial" ||
    { echo "cannot write the initramfs $ir_out"; return 1; }
  mv "$ir_out.partial" "$ir_out" && rm -rf "$ir_stage" && echo "$LVMQOS_QEMU_INITRD_VERSION" > "$ir_out.version"
}

# lvmqos_qemu_initrd_current DIR: makes DIR's initramfs again if it was made by an older version of
# lvmqos_qemu_initramfs (a kernel cached before its /init learnt what this script now asks of it).
lvmqos_qemu_initrd_current() {
  ic_dir=$1
  [ "$(cat "$ic_dir/initrd.gz.version" 2>/dev/null)" = "$LVMQOS_QEMU_INITRD_VERSION" ] && return 0
  lvmqos_qemu_initramfs "$ic_dir/root" "$(cat "$ic_dir/release")" "$ic_dir/initrd.gz"
}

# lvmqos_qemu_fetch: brings the suite's linux-image-amd64 kernel into the cache (once per version), with
# its modules.dep and the initramfs, and prints the cached directory; on failure prints one line saying
# why and returns 1.
lvmqos_qemu_fetch() {
  fetch_suite=$(lvmqos_qemu_suite)
  [ -n "$fetch_suite" ] || { echo "cannot tell this machine's Debian suite from /etc/os-release; set LVMQOS_QEMU_SUITE"; return 1; }
  lvmqos_apt_private "$LVMQOS_QEMU_CACHE/apt/$fetch_suite" "$fetch_suite" || return 1
  # linux-image-amd64 is a metapackage: it depends on exactly one versioned kernel package.
  fetch_dep=$(lvmqos_uml_apt apt-cache depends linux-image-amd64 2>/dev/null |
    sed -n 's/^ *Depends: \(linux-image-[0-9][^ ]*\)$/\1/p' | head -n 1)
  [ -n "$fetch_dep" ] || { echo "$fetch_suite has no linux-image-amd64"; return 1; }
  lvmqos_debs_fetch "$LVMQOS_QEMU_CACHE" "$fetch_suite" "$fetch_dep" || return 1
  if [ -f "$fetch_dir/ready" ]; then echo "$fetch_dir"; return 0; fi
  fetch_release=$(ls "$fetch_dir.partial/root/lib/modules" 2>/dev/null | head -n 1)
  [ -n "$fetch_release" ] && [ -f "$fetch_dir.partial/root/boot/vmlinuz-$fetch_release" ] ||
    { echo "$fetch_dep holds no boot/vmlinuz-<release> beside lib/modules/<release>"; return 1; }
  # The package leaves modules.dep to its postinst, which dpkg -x does not run.
  fetch_out=$(depmod -b "$fetch_dir.partial/root" "$fetch_release" 2>&1) ||
    { echo "depmod -b $fetch_dir.partial/root $fetch_release failed: $fetch_out"; return 1; }
  echo "$fetch_release" > "$fetch_dir.partial/release"
  echo "Debian $fetch_dep $fetch_version from $fetch_suite" > "$fetch_dir.partial/origin"
  lvmqos_qemu_vmlinux "$fetch_dir.partial/root/boot/vmlinuz-$fetch_release" "$fetch_dir.partial/vmlinux" || return 1
  lvmqos_qemu_initramfs "$fetch_dir.partial/root" "$fetch_release" "$fetch_dir.partial/initrd.gz" || return 1
  rm -rf "$fetch_dir"
  mv "$fetch_dir.partial" "$fetch_dir" && touch "$fetch_dir/ready" || { echo "cannot move $fetch_dir into place"; return 1; }
  echo "$fetch_dir"
}

# lvmqos_qemu_probe DIR: boots the kernel cached in DIR with its initramfs, as a guest of this kind
# boots, to an init that loads dm-mod from the kernel's own modules. Prints the kernel's release and
# returns 0 if it came up and the modules fit it; otherwise prints one line saying why not and returns 1.
lvmqos_qemu_probe() {
  probe_dir=$1
  probe_release=$(cat "$probe_dir/release" 2>/dev/null)
  probe_modules=$probe_dir/root/lib/modules/$probe_release
  [ -n "$probe_release" ] && [ -r "$probe_modules/modules.dep" ] || { echo "no modules.dep in $probe_modules"; return 1; }
  probe_run=$(mktemp -d /tmp/lvmqos-qemu-probe.XXXXXX) || { echo "cannot make a directory in /tmp"; return 1; }
  probe_dm=$(lvmqos_qemu_module_files "$probe_modules" dm-mod | tail -n 1)
  # The probe's init, run from the host's root: which kernel came up, and whether its own modules load.
  cat > "$probe_run/init" << EOF
#!/bin/sh
mount -t proc proc /proc
if out=\$(/sbin/insmod "$probe_modules/$probe_dm" 2>&1); then result=ok; else result="insmod dm-mod failed: \$out"; fi
echo "LVMQOS-PROBE release=\$(uname -r) modules=\$result"
echo o > /proc/sysrq-trigger 2> /dev/null || poweroff -f
sleep 10
EOF
  chmod 555 "$probe_run/init"
  # panic=-1 and -no-reboot: a kernel that panics ends qemu at once instead of waiting for the timeout.
  timeout -k 5 "$LVMQOS_QEMU_PROBE_TIMEOUT" qemu-system-x86_64 -accel tcg -m 512M -smp 1 -nographic -nic none \
    -no-reboot -kernel "$probe_dir/vmlinux" -initrd "$probe_dir/initrd.gz" \
    -virtfs local,path=/,mount_tag=root,security_model=none,readonly=on,multidevs=remap \
    -append "console=ttyS0 panic=-1 quiet LVMQOS_INIT=$probe_run/init" < /dev/null > "$probe_run/console" 2>&1
  probe_status=$?
  # Not anchored: the firmware's terminal resets share the line.
  probe_line=$(grep -a -m 1 'LVMQOS-PROBE ' "$probe_run/console" | tr -d '\r' | sed 's/.*LVMQOS-PROBE /LVMQOS-PROBE /')
  probe_got=$(printf '%s\n' "$probe_line" | sed -n 's/^LVMQOS-PROBE release=\([^ ]*\) .*/\1/p')
  probe_result=$(printf '%s\n' "$probe_line" | sed -n 's/^LVMQOS-PROBE release=[^ ]* modules=//p')
  probe_why=""
  for pattern in 'LVMQOS-STAGE init failed' 'Kernel panic' 'qemu-system-x86_64:'; do
    probe_why=$(grep -a -m 1 -E "$pattern" "$probe_run/console" | tr -d '\r' | cut -c 1-200)
    [ -n "$probe_why" ] && break
  done
  [ -n "${LVMQOS_QEMU_KEEP_PROBE:-}" ] || rm -rf "$probe_run"
  if [ -z "$probe_line" ]; then
    case "$probe_status" in
      124|137) echo "did not reach init within ${LVMQOS_QEMU_PROBE_TIMEOUT} s${probe_why:+: $probe_why}" ;;
      *) echo "qemu exited with code $probe_status before init ran${probe_why:+: $probe_why}" ;;
    esac
    return 1
  fi
  [ "$probe_result" = ok ] || { echo "kernel $probe_got booted, but its modules do not load: $probe_result"; return 1; }
  [ "$probe_got" = "$probe_release" ] || { echo "kernel $probe_got booted, not $probe_release"; return 1; }
  echo "$probe_got"
}

# lvmqos_qemu_use DIR RELEASE: exports the kernel cached in DIR and says what it is.
lvmqos_qemu_use() {
  LVMQOS_QEMU_KERNEL=$1/vmlinux
  LVMQOS_QEMU_INITRD=$1/initrd.gz
  LVMQOS_QEMU_MODULES=$1/root/lib/modules/$2
  LVMQOS_QEMU_RELEASE=$2
  export LVMQOS_QEMU_KERNEL LVMQOS_QEMU_INITRD LVMQOS_QEMU_MODULES LVMQOS_QEMU_RELEASE
  echo "qemu guest kernel $2: $(cat "$1/origin"), cached in $1" >&2
  sed 's/^/  package /' "$1/packages" >&2
}

lvmqos_qemu_stop() {
  cat >&2 << MSG
error: no Debian kernel that boots under qemu could be had, so the qemu node tests cannot run. Tried:$qemu_tried
Run as root with this machine's apt sources reachable, or set LVMQOS_SKIP_QEMU=1 to skip those tests explicitly.
MSG
  return 1
}

lvmqos_pick_qemu() {
  if [ "${LVMQOS_SKIP_QEMU:-}" = 1 ]; then
    echo "LVMQOS_SKIP_QEMU=1: no qemu guest kernel; the qemu node tests will be skipped" >&2
    return 0
  fi
  qemu_tried=""
  if ! qemu_out=$(lvmqos_qemu_packages); then
    qemu_tried="
  - $qemu_out"
    lvmqos_qemu_stop; return 1
  fi
  # A kernel fetched before, newest version first.
  for qemu_dir in $(ls -d "$LVMQOS_QEMU_CACHE"/*/ready 2>/dev/null | sed 's,/ready$,,' | sort -rV); do
    if qemu_out=$(flock "$LVMQOS_QEMU_CACHE" sh -c '. "$0"; . "$1"; lvmqos_qemu_initrd_current "$2"' \
        "$LVMQOS_SCRIPTS_DIR/lib.sh" "$LVMQOS_SCRIPTS_DIR/qemu.sh" "$qemu_dir") &&
        qemu_out=$(lvmqos_qemu_probe "$qemu_dir"); then lvmqos_qemu_use "$qemu_dir" "$qemu_out"; return 0; fi
    qemu_tried="$qemu_tried
  - $(cat "$qemu_dir/origin" 2>/dev/null), cached in $qemu_dir: $qemu_out"
  done
  if [ "$(id -u)" -ne 0 ]; then
    qemu_tried="$qemu_tried
  - fetching a kernel: not root"
    lvmqos_qemu_stop; return 1
  fi
  # The suite's current kernel; one fetch at a time on this machine.
  if ! qemu_dir=$(mkdir -p "$LVMQOS_QEMU_CACHE" && LVMQOS_QEMU_CACHE=$LVMQOS_QEMU_CACHE flock "$LVMQOS_QEMU_CACHE" sh -c \
      '. "$0"; . "$1"; lvmqos_qemu_fetch' "$LVMQOS_SCRIPTS_DIR/lib.sh" "$LVMQOS_SCRIPTS_DIR/qemu.sh"); then
    qemu_tried="$qemu_tried
  - linux-image-amd64 of Debian $(lvmqos_qemu_suite): $qemu_dir"
    lvmqos_qemu_stop; return 1
  fi
  case "$qemu_tried" in *"cached in $qemu_dir:"*) lvmqos_qemu_stop; return 1 ;; esac # probed above already
  if qemu_out=$(lvmqos_qemu_probe "$qemu_dir"); then lvmqos_qemu_use "$qemu_dir" "$qemu_out"; return 0; fi
  qemu_tried="$qemu_tried
  - $(cat "$qemu_dir/origin"), cached in $qemu_dir: $qemu_out"
  lvmqos_qemu_stop
}
