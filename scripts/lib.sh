# Shared by ./run-tests, ./demo and test-e2e/csi-sanity.sh: install what the real-kernel tests need,
# pick (or fetch) a JDK >= 25, and choose a user-mode-Linux kernel that boots on this host. Sourced, not executed.

# patchelf points a newer Debian suite's linux.uml at the C library unpacked beside it (lvmqos_pick_uml).
# umoci makes the images' OCI archives (scripts/build-image); gcc and libc6-dev build its static pause
# program; containerd and runc are the container runtime of the UML test node. The guest's root is
# this machine's /: iproute2 (ip, which brings the guest's lo up) and procps (ps, in the guest tests'
# diagnostics) come with every Debian 12 install, but not with a minimal root or a container.
# qemu-system-x86, busybox-static and xz-utils: the qemu test node (scripts/qemu.sh); systemd and dbus:
# that node's init and bus when it boots as most production nodes do (SystemdNodeIT; Debian 12 ships
# both, a minimal root or a container may not).
REQUIRED_PACKAGES="lvm2 thin-provisioning-tools user-mode-linux uml-utilities kmod e2fsprogs xfsprogs fio util-linux maven patchelf umoci gcc libc6-dev containerd runc iproute2 procps qemu-system-x86 busybox-static xz-utils systemd dbus"

lvmqos_install_packages() {
  missing=""
  for pkg in $REQUIRED_PACKAGES; do
    dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed" || missing="$missing $pkg"
  done
  [ -z "$missing" ] && return 0
  echo "installing:$missing" >&2
  if [ "$(id -u)" -ne 0 ]; then
    echo "error: packages$missing are missing and installing them needs root" >&2
    return 1
  fi
  DEBIAN_FRONTEND=noninteractive apt-get update -qq && \
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $missing >/dev/null
}

# Prints the major version of the java binary given as $1.
lvmqos_java_major() {
  "$1" -XshowSettings:properties -version 2>&1 | sed -n 's/^ *java.specification.version = //p' | head -n 1
}

# --- the JDK ----------------------------------------------------------------------------------------
#
# The build needs a JDK of version 25 or newer (its language level: the mount package binds libc with
# the foreign-function API), as does the image build (scripts/build-image: its AOT cache and `jdeps
# --multi-release 25`). lvmqos_pick_jdk [MIN] (MIN defaults to 25) exports JAVA_HOME:
# $JAVA_HOME if it is a JDK >= MIN, else the newest such JDK under /usr/lib/jvm, else one fetched before,
# else (as root) Debian 13's openjdk-25-jdk-headless, fetched once the way the UML kernel is: apt-get
# download through this machine's own archive URI under a private apt configuration, with apt's
# signature checks, unpacked with dpkg -x into $LVMQOS_JDK_CACHE/<version>/. Debian 12 packages no JDK
# newer than 17, and no other registry reachable here serves one (Maven Central and npm have none).
# Debian 13's binaries need glibc 2.38 (the C23 strtol and scanf family, fmod), Debian 12 has 2.36: libc6
# of the same suite is unpacked beside the JDK and every executable and library of the JDK is pointed
# at it with patchelf, as linux.uml is; libstdc++, libgcc and zlib are the system's (the JDK asks for
# nothing newer of them). Such a JVM has two C libraries within reach: native code must bind the one
# it runs on (NativeLibC binds RTLD_DEFAULT), never a libc.so.6 found by path. Debian's package keeps its configuration in /etc/java-25-openjdk behind
# symlinks: the files are copied into the JDK instead. Its trust store is the system's
# /etc/ssl/certs/java/cacerts (ca-certificates-java, which Debian's maven brings in); where that is
# missing, one is written from /etc/ssl/certs/ca-certificates.crt. Nothing outside the cache is touched.
# Before use, the JDK must print its version, compile scripts/JdkProbe.java and run it: the probe
# loads the default trust store, which Maven needs to reach its repository over TLS.

LVMQOS_JDK_CACHE=${LVMQOS_JDK_CACHE:-/var/cache/lvmqos/jdk}
LVMQOS_JDK_SUITES=${LVMQOS_JDK_SUITES:-trixie}
LVMQOS_JDK_PACKAGE=${LVMQOS_JDK_PACKAGE:-openjdk-25-jdk-headless}
# Where installed JDKs are looked for (another directory lets a test see what a machine without one does).
LVMQOS_JVM_DIR=${LVMQOS_JVM_DIR:-/usr/lib/jvm}

# lvmqos_jdk_probe HOME MIN: prints HOME's major version and returns 0 if HOME is a JDK of version MIN
# or newer whose java runs; otherwise prints one line saying why not and returns 1.
lvmqos_jdk_probe() {
  jdk_home=$1 jdk_min=$2
  if [ ! -x "$jdk_home/bin/java" ] || [ ! -x "$jdk_home/bin/javac" ]; then echo "no bin/java and bin/javac"; return 1; fi
  jdk_major=$(lvmqos_java_major "$jdk_home/bin/java")
  if [ -z "$jdk_major" ]; then
    echo "its java does not run: $("$jdk_home/bin/java" -version 2>&1 | head -n 1 | cut -c 1-200)"
    return 1
  fi
  if [ "$jdk_major" -lt "$jdk_min" ] 2>/dev/null; then echo "version $jdk_major, older than $jdk_min"; return 1; fi
  echo "$jdk_major"
}

# lvmqos_jdk_prove HOME: the proof a fetched JDK gives before use: java -version, then JdkProbe
# compiled by its javac and run by its java (which loads the default trust store). Prints the probe's
# line, or one line saying what failed; returns 0 or 1.
lvmqos_jdk_prove() {
  prove_home=$1
  if ! prove_version=$("$prove_home/bin/java" -version 2>&1); then
    echo "java -version failed: $(printf '%s' "$prove_version" | head -n 1 | cut -c 1-200)"; return 1
  fi
  prove_dir=$(mktemp -d /tmp/lvmqos-jdk-probe.XXXXXX) || { echo "cannot make a directory in /tmp"; return 1; }
  if ! prove_out=$("$prove_home/bin/javac" -d "$prove_dir" "$LVMQOS_SCRIPTS_DIR/JdkProbe.java" 2>&1); then
    rm -rf "$prove_dir"; echo "javac failed: $(printf '%s' "$prove_out" | head -n 1 | cut -c 1-200)"; return 1
  fi
  # The status without set -e's exit, which a caller's `set -e` would bring into this subshell.
  prove_out=$("$prove_home/bin/java" -cp "$prove_dir" JdkProbe 2>&1) && prove_status=0 || prove_status=$?
  rm -rf "$prove_dir"
  if [ "$prove_status" -ne 0 ]; then echo "the probe failed: $(printf '%s' "$prove_out" | tail -n 1 | cut -c 1-200)"; return 1; fi
  printf '%s\n' "$prove_out" | grep -m 1 '^LVMQOS-JDK-PROBE '
}

# lvmqos_elf_use_libc DIR LIBDIR: points every ELF executable under DIR at the dynamic loader in LIBDIR
# and every ELF file under DIR at the libraries there, after its own search path ($ORIGIN...). An
# RPATH, not a RUNPATH: it also serves the libraries that the JVM opens with dlopen.
lvmqos_elf_use_libc() {
  find "$1" -type f | while read -r elf; do
    [ "$(od -An -c -N 4 "$elf" | tr -d ' ')" = 177ELF ] || continue
    if patchelf --print-interpreter "$elf" >/dev/null 2>&1; then
      patchelf --set-interpreter "$2/ld-linux-x86-64.so.2" "$elf" || { echo "patchelf of $elf failed"; exit 1; }
    fi
    elf_rpath=$(patchelf --print-rpath "$elf")
    patchelf --force-rpath --set-rpath "${elf_rpath:+$elf_rpath:}$2" "$elf" || { echo "patchelf of $elf failed"; exit 1; }
  done
}

# lvmqos_jdk_fetch SUITE: brings that suite's $LVMQOS_JDK_PACKAGE, with its JRE and its libc6, into the
# cache (once per version) and prints the cached directory; on failure prints one line saying why and
# returns 1.
lvmqos_jdk_fetch() {
  fetch_suite=$1
  # openjdk-25-jdk-headless depends on openjdk-25-jre-headless of the same version.
  fetch_jre=$(echo "$LVMQOS_JDK_PACKAGE" | sed 's/-jdk-headless$/-jre-headless/')
  lvmqos_apt_private "$LVMQOS_JDK_CACHE/apt/$fetch_suite" "$fetch_suite" || return 1
  lvmqos_debs_fetch "$LVMQOS_JDK_CACHE" "$fetch_suite" "$LVMQOS_JDK_PACKAGE" "$fetch_jre=" libc6 || return 1
  if [ -f "$fetch_dir/ready" ]; then echo "$fetch_dir"; return 0; fi
  rm -rf "$fetch_dir.partial/root/usr/share/doc" "$fetch_dir.partial/root/usr/share/man" "$fetch_dir.partial/root/usr/lib/debug"
  fetch_home=$(cd "$fetch_dir.partial/root" && ls -d usr/lib/jvm/java-*-openjdk-* 2>/dev/null | while read -r d; do
    [ -L "$d" ] || echo "$d"; done | head -n 1)
  [ -x "$fetch_dir.partial/root/$fetch_home/bin/javac" ] || { echo "the packages hold no JDK under usr/lib/jvm"; return 1; }
  # The configuration behind symlinks into /etc: the package's own copy, unpacked from the same .debs.
  find "$fetch_dir.partial/root/$fetch_home" -type l | while read -r link; do
    target=$(readlink "$link")
    case "$target" in
      /etc/ssl/certs/java/cacerts) ;;
      /etc/*)
        [ -f "$fetch_dir.partial/root$target" ] || { echo "$link points at $target, which the packages lack"; exit 1; }
        cp --remove-destination "$fetch_dir.partial/root$target" "$link" || { echo "cannot copy $target"; exit 1; } ;;
    esac
  done || return 1
  # Paths inside the final directory: the partial one is renamed into place once complete.
  fetch_libdir=$fetch_dir/root/usr/lib/x86_64-linux-gnu
  lvmqos_elf_use_libc "$fetch_dir.partial/root/$fetch_home" "$fetch_libdir" || return 1
  echo "Debian $LVMQOS_JDK_PACKAGE $fetch_version from $fetch_suite" > "$fetch_dir.partial/origin"
  echo "$fetch_home" > "$fetch_dir.partial/home"
  rm -rf "$fetch_dir"
  mv "$fetch_dir.partial" "$fetch_dir" || { echo "cannot move $fetch_dir into place"; return 1; }
  # The trust store: the system's where ca-certificates-java made one, else one of the system's CAs.
  if [ ! -r /etc/ssl/certs/java/cacerts ]; then
    [ -r /etc/ssl/certs/ca-certificates.crt ] || { echo "neither /etc/ssl/certs/java/cacerts nor /etc/ssl/certs/ca-certificates.crt exists: install ca-certificates"; return 1; }
    trust_dir=$(mktemp -d /tmp/lvmqos-jdk-trust.XXXXXX) || { echo "cannot make a directory in /tmp"; return 1; }
    rm -f "$fetch_dir/root/$fetch_home/lib/security/cacerts"
    if ! trust_out=$("$fetch_dir/root/$fetch_home/bin/javac" -d "$trust_dir" "$LVMQOS_SCRIPTS_DIR/JdkProbe.java" 2>&1 \
        && "$fetch_dir/root/$fetch_home/bin/java" -cp "$trust_dir" JdkProbe --write-trust-store \
          /etc/ssl/certs/ca-certificates.crt "$fetch_dir/root/$fetch_home/lib/security/cacerts" 2>&1); then
      rm -rf "$trust_dir"; echo "cannot write a trust store: $(printf '%s' "$trust_out" | tail -n 1 | cut -c 1-200)"; return 1
    fi
    rm -rf "$trust_dir"
  fi
  touch "$fetch_dir/ready"
  echo "$fetch_dir"
}

# lvmqos_jdk_try_cached DIR MIN: proves a cached JDK and, if it qualifies, exports it.
lvmqos_jdk_try_cached() {
  cached_home=$1/root/$(cat "$1/home" 2>/dev/null)
  if cached_out=$(lvmqos_jdk_probe "$cached_home" "$2"); then
    if cached_proof=$(lvmqos_jdk_prove "$cached_home"); then
      export JAVA_HOME="$cached_home"
      echo "using JDK $cached_out at $JAVA_HOME: $(cat "$1/origin"), cached in $1 (${cached_proof#LVMQOS-JDK-PROBE })" >&2
      sed 's/^/  package /' "$1/packages" >&2
      return 0
    fi
    cached_out=$cached_proof
  fi
  jdk_tried="$jdk_tried
  - $(cat "$1/origin" 2>/dev/null || echo "$1") ($cached_home): $cached_out"
  return 1
}

lvmqos_pick_jdk() {
  want=${1:-25}
  jdk_tried=""
  if [ -n "${JAVA_HOME:-}" ]; then
    if own=$(lvmqos_jdk_probe "$JAVA_HOME" "$want"); then export JAVA_HOME; return 0; fi
    jdk_tried="
  - JAVA_HOME=$JAVA_HOME: $own"
  fi
  best=""; best_major=0
  for home in "$LVMQOS_JVM_DIR"/*; do
    [ -L "$home" ] && continue # Debian's java-1.N.0-openjdk-amd64 names the same JDK as java-N-openjdk-amd64
    major=$(lvmqos_jdk_probe "$home" "$want") || continue
    if [ "$major" -gt "$best_major" ]; then best="$home"; best_major="$major"; fi
  done
  if [ -n "$best" ]; then
    export JAVA_HOME="$best"
    echo "using JDK $best_major at $JAVA_HOME" >&2
    return 0
  fi
  jdk_tried="$jdk_tried
  - $LVMQOS_JVM_DIR: no JDK $want or newer"
  # A JDK fetched before, newest version first.
  for cached in $(ls -d "$LVMQOS_JDK_CACHE"/*/ready 2>/dev/null | sed 's,/ready$,,' | sort -rV); do
    lvmqos_jdk_try_cached "$cached" "$want" && return 0
  done
  if [ "$(id -u)" -eq 0 ]; then
    for suite in $LVMQOS_JDK_SUITES; do
      if fetched=$(mkdir -p "$LVMQOS_JDK_CACHE" && flock "$LVMQOS_JDK_CACHE" sh -c '. "$0"; lvmqos_jdk_fetch "$1"' \
          "$LVMQOS_SCRIPTS_DIR/lib.sh" "$suite"); then
        case "$jdk_tried" in *"$fetched/"*) continue ;; esac # proved above already
        lvmqos_jdk_try_cached "$fetched" "$want" && return 0
      else
        jdk_tried="$jdk_tried
  - $LVMQOS_JDK_PACKAGE from Debian $suite: $fetched"
      fi
    done
  else
    jdk_tried="$jdk_tried
  - fetching Debian's $LVMQOS_JDK_PACKAGE: not root"
  fi
  cat >&2 <<MSG
error: no JDK $want or newer could be had. Tried:$jdk_tried
Run as root to fetch Debian's $LVMQOS_JDK_PACKAGE into $LVMQOS_JDK_CACHE, or install a JDK $want or newer
(e.g. Temurin) and set JAVA_HOME to it.
MSG
  return 1
}

# --- the user-mode-Linux kernel ---------------------------------------------------------------------
#
# The real-kernel tests and the demo boot a user-mode-Linux (UML) kernel. The kernel they use is the
# newest `user-mode-linux` of Debian's testing suite (unstable if testing has none that boots), the same
# on every host, because older ones do not boot everywhere: on a host kernel that wants the CPU's full
# XSAVE area in PTRACE_SETREGSET (Intel CPUs with AMX), Debian 12's 6.1 and Debian 13's 6.12 panic
# before init with "ptrace set fp regs failed". It is fetched once with apt-get download, through the
# archive URI that this machine's own apt sources name, with apt's signature checks, into
# $LVMQOS_UML_CACHE/<version>/, and reused from there. It needs a newer C library than Debian 12's:
# libc6 of the same suite is unpacked beside it and linux.uml is pointed at it with patchelf; the
# system's libc is not touched. Only if none can be fetched does Debian 12's own linux.uml serve, when
# it boots. Every candidate is proven by a probe boot of a few seconds before it is used.
#
# LVMQOS_UML=/path/to/linux.uml (with LVMQOS_UML_MODULES=/path/to/its/modules) brings your own kernel:
# it is probed, and used or refused, with no fallback.
#
# lvmqos_pick_uml exports LVMQOS_UML, LVMQOS_UML_MODULES (the directory holding the kernel's
# modules.dep), LVMQOS_UML_RELEASE (uname -r in the guest) and LVMQOS_UML_ORIGIN (where it came from).

LVMQOS_UML_CACHE=${LVMQOS_UML_CACHE:-/var/cache/lvmqos/uml}
LVMQOS_UML_SUITES=${LVMQOS_UML_SUITES:-testing unstable}
LVMQOS_UML_PROBE_TIMEOUT=${LVMQOS_UML_PROBE_TIMEOUT:-60}
# A sourced file cannot see its own path: every caller sources this one from the checkout's top.
LVMQOS_SCRIPTS_DIR=${LVMQOS_SCRIPTS_DIR:-$PWD/scripts}

# lvmqos_uml_probe KERNEL MODULES: boots KERNEL for a few seconds with an init that loads dm-mod from
# MODULES (the directory holding modules.dep, or its parent). Prints the kernel's release and returns
# 0 if it came up and the modules fit it; otherwise prints one line saying why not and returns 1.
lvmqos_uml_probe() {
  probe_kernel=$1 probe_modules=$2
  if [ ! -e "$probe_kernel" ]; then echo "no such file"; return 1; fi
  if [ ! -f "$probe_kernel" ] || [ ! -x "$probe_kernel" ]; then echo "not an executable file"; return 1; fi
  probe_magic=$(od -An -c -N 4 "$probe_kernel" | tr -d ' ')
  case "$probe_magic" in
    177ELF*|'#!'*) ;;
    *) echo "not a kernel: neither an ELF executable nor a script"; return 1 ;;
  esac
  # Both reach the kernel's command line, which is split at blanks.
  case "$probe_kernel$probe_modules" in
    *[[:space:]]*) echo "its path or its module directory's path contains a blank"; return 1 ;;
  esac
  probe_dir=$(mktemp -d /tmp/lvmqos-uml-probe.XXXXXX) || { echo "cannot make a directory in /tmp"; return 1; }
  cp "$LVMQOS_SCRIPTS_DIR/uml-probe-init" "$probe_dir/init" && chmod 555 "$probe_dir/init" || {
    rm -rf "$probe_dir"; echo "cannot copy $LVMQOS_SCRIPTS_DIR/uml-probe-init"; return 1; }
  # timeout signals the whole process group: UML's helper processes go with it. A kernel that panics
  # after the probe's line (no halt, as on a root without an init system) exits with 134: its status is
  # taken without set -e, which the callers' `set -e` would bring into this subshell and end it silently.
  timeout -k 5 "$LVMQOS_UML_PROBE_TIMEOUT" "$probe_kernel" mem=128M rootfstype=hostfs rootflags=/ ro \
    init="$probe_dir/init" con=null con0=fd:0,fd:1 uml_dir="$probe_dir/uml" umid=probe \
    LVMQOS_PROBE_MODULES="$probe_modules" < /dev/null > "$probe_dir/console" 2>&1 && probe_status=0 || probe_status=$?
  probe_line=$(grep -a -m 1 '^LVMQOS-PROBE ' "$probe_dir/console" | tr -d '\r')
  probe_release=$(printf '%s\n' "$probe_line" | sed -n 's/^LVMQOS-PROBE release=\([^ ]*\) .*/\1/p')
  probe_result=$(printf '%s\n' "$probe_line" | sed -n 's/^LVMQOS-PROBE release=[^ ]* modules=//p')
  # The most telling line first: a failed host call (the AMX case), then the panic itself.
  probe_why=""
  for pattern in 'failed, errno' 'Kernel panic' 'Too few|error while loading|cannot execute|Exec format'; do
    probe_why=$(grep -a -m 1 -E "$pattern" "$probe_dir/console" | tr -d '\r' | cut -c 1-200)
    [ -n "$probe_why" ] && break
  done
  rm -rf "$probe_dir"
  if [ -z "$probe_line" ]; then
    case "$probe_status" in
      124|137) echo "did not reach init within ${LVMQOS_UML_PROBE_TIMEOUT} s${probe_why:+: $probe_why}" ;;
      *) echo "exited with code $probe_status before init ran${probe_why:+: $probe_why}" ;;
    esac
    return 1
  fi
  if [ "$probe_result" != ok ]; then
    echo "kernel $probe_release booted, but its modules do not fit it: $probe_result"
    return 1
  fi
  echo "$probe_release"
}

# lvmqos_uml_use KERNEL MODULES RELEASE ORIGIN: exports the choice and says what it is.
lvmqos_uml_use() {
  LVMQOS_UML=$1
  if [ -r "$2/modules.dep" ]; then LVMQOS_UML_MODULES=$2; else LVMQOS_UML_MODULES=$2/$3; fi
  LVMQOS_UML_RELEASE=$3
  LVMQOS_UML_ORIGIN=$4
  export LVMQOS_UML LVMQOS_UML_MODULES LVMQOS_UML_RELEASE LVMQOS_UML_ORIGIN
  echo "user-mode Linux kernel $LVMQOS_UML_RELEASE: $LVMQOS_UML_ORIGIN ($LVMQOS_UML)" >&2
}

# lvmqos_uml_apt ARGS...: apt-get or apt-cache with a private configuration under the cache: its own
# sources list, lists, archives and an empty dpkg status, so that the system's apt state is not touched.
lvmqos_uml_apt() {
  apt_tool=$1; shift
  "$apt_tool" -q -o Dir::Etc::SourceList="$uml_apt/sources.list" -o Dir::Etc::SourceParts=/dev/null \
    -o Dir::Etc::Preferences=/dev/null -o Dir::Etc::PreferencesParts=/dev/null \
    -o Dir::State::Lists="$uml_apt/lists" -o Dir::State::status="$uml_apt/status" \
    -o Dir::Cache="$uml_apt/cache" -o Dir::Cache::archives="$uml_apt/cache/archives" \
    -o APT::Sandbox::User=root "$@"
}

# The first archive URI of this machine's own apt sources (deb822 or one-line format): no host name
# is ever written by this project.
lvmqos_debian_uri() {
  if [ -r /etc/apt/sources.list.d/debian.sources ]; then
    sed -n 's/^URIs:[[:space:]]*\([^[:space:]]*\).*/\1/p' /etc/apt/sources.list.d/debian.sources | head -n 1
  else
    cat /etc/apt/sources.list /etc/apt/sources.list.d/*.list 2>/dev/null \
      | awk '$1 == "deb" { for (i = 2; i <= NF; i++) if ($i ~ /^[a-z]+:\/\//) { print $i; exit } }'
  fi
}

# lvmqos_apt_private DIR SUITE: makes DIR a private apt configuration for SUITE of this machine's own
# archive (for lvmqos_uml_apt, which reads $uml_apt) and updates its lists; on failure prints one line
# saying why and returns 1. The image build (scripts/build-image) uses it too.
lvmqos_apt_private() {
  uml_apt=$1 private_suite=$2
  private_uri=$(lvmqos_debian_uri)
  if [ -z "$private_uri" ]; then echo "this machine's apt sources name no Debian archive"; return 1; fi
  keyring=/usr/share/keyrings/debian-archive-keyring.gpg
  mkdir -p "$uml_apt/lists/partial" "$uml_apt/cache/archives/partial" "$uml_apt/debs" || {
    echo "cannot write to $uml_apt"; return 1; }
  : > "$uml_apt/status"
  echo "deb [signed-by=$keyring] $private_uri $private_suite main" > "$uml_apt/sources.list"
  if ! private_out=$(lvmqos_uml_apt apt-get update 2>&1); then
    echo "apt-get update of $private_suite failed: $(printf '%s' "$private_out" | grep -E '^(E|W):' | head -n 2 | tr '\n' ' ')"
    return 1
  fi
}

# lvmqos_debs_fetch CACHE SUITE PACKAGE [MORE...]: the one way a pinned Debian package comes into a cache
# (the JDK's, the UML kernel's, the qemu node's kernel), after lvmqos_apt_private CACHE/apt/SUITE SUITE
# (apt checks the archive's signatures). It takes PACKAGE's candidate version in SUITE and sets
# fetch_version and fetch_dir=CACHE/<version>. If fetch_dir is ready (fetched before) it returns at
# once. Else it downloads PACKAGE and the MORE packages (one ending in "=" at PACKAGE's version, such as
# a JDK's own JRE), records each .deb's sha256 in $fetch_dir.partial/packages, unpacks them into
# $fetch_dir.partial/root and returns 0: the caller finishes the partial directory and moves it into
# place. On failure prints one line saying why and returns 1.
lvmqos_debs_fetch() {
  debs_cache=$1 debs_suite=$2 debs_package=$3; shift 3
  fetch_version=$(lvmqos_uml_apt apt-cache policy "$debs_package" 2>/dev/null | sed -n 's/^ *Candidate: //p')
  case "$fetch_version" in
    ''|'(none)') echo "$debs_suite has no $debs_package"; return 1 ;;
  esac
  fetch_dir=$debs_cache/$fetch_version
  if [ -f "$fetch_dir/ready" ]; then return 0; fi
  debs_wanted="$debs_package"
  for debs_more in "$@"; do
    case "$debs_more" in *=) debs_more="$debs_more$fetch_version" ;; esac
    debs_wanted="$debs_wanted $debs_more"
  done
  rm -rf "$fetch_dir.partial" "$uml_apt/debs"/*.deb
  echo "fetching $debs_wanted from Debian $debs_suite" >&2
  # Package names hold no blanks: $debs_wanted splits into them.
  if ! debs_out=$(cd "$uml_apt/debs" && lvmqos_uml_apt apt-get download $debs_wanted 2>&1); then
    echo "apt-get download $debs_package from $debs_suite failed: $(printf '%s' "$debs_out" | grep -E '^(E|W):' | head -n 2 | tr '\n' ' ')"
    return 1
  fi
  mkdir -p "$fetch_dir.partial/root" || { echo "cannot write $fetch_dir.partial"; return 1; }
  for deb in "$uml_apt/debs"/*.deb; do
    debs_sum=$(sha256sum "$deb" | cut -d ' ' -f 1)
    echo "fetched $(basename "$deb") sha256 $debs_sum" >&2
    echo "$(basename "$deb") sha256 $debs_sum" >> "$fetch_dir.partial/packages"
    dpkg -x "$deb" "$fetch_dir.partial/root" || { echo "dpkg -x $deb failed"; return 1; }
  done
  rm -f "$uml_apt/debs"/*.deb
}

# lvmqos_uml_fetch SUITE: brings that suite's user-mode-linux, with its libc6, into the cache (once per
# version) and prints the cached directory; on failure prints one line saying why and returns 1.
lvmqos_uml_fetch() {
  fetch_suite=$1
  lvmqos_apt_private "$LVMQOS_UML_CACHE/apt/$fetch_suite" "$fetch_suite" || return 1
  lvmqos_debs_fetch "$LVMQOS_UML_CACHE" "$fetch_suite" user-mode-linux libc6 || return 1
  if [ -f "$fetch_dir/ready" ]; then echo "$fetch_dir"; return 0; fi
  fetch_libdir=$fetch_dir/root/usr/lib/x86_64-linux-gnu
  fetch_release=$(ls "$fetch_dir.partial/root/usr/lib/uml/modules" | head -n 1)
  [ -n "$fetch_release" ] || { echo "the package holds no modules under usr/lib/uml/modules"; return 1; }
  # Paths inside the final directory: the partial one is renamed into place once complete.
  patchelf --set-interpreter "$fetch_libdir/ld-linux-x86-64.so.2" --set-rpath "$fetch_libdir" \
    "$fetch_dir.partial/root/usr/bin/linux.uml" || { echo "patchelf of linux.uml failed"; return 1; }
  echo "Debian user-mode-linux $fetch_version from $fetch_suite" > "$fetch_dir.partial/origin"
  echo "$fetch_release" > "$fetch_dir.partial/release"
  rm -rf "$fetch_dir"
  mv "$fetch_dir.partial" "$fetch_dir" && touch "$fetch_dir/ready" || { echo "cannot move $fetch_dir into place"; return 1; }
  echo "$fetch_dir"
}

# Tries a cached kernel directory; on success exports it.
lvmqos_uml_try_cached() {
  cached=$1
  cached_release=$(cat "$cached/release" 2>/dev/null)
  if cached_out=$(lvmqos_uml_probe "$cached/root/usr/bin/linux.uml" "$cached/root/usr/lib/uml/modules/$cached_release"); then
    lvmqos_uml_use "$cached/root/usr/bin/linux.uml" "$cached/root/usr/lib/uml/modules/$cached_release" "$cached_out" \
      "$(cat "$cached/origin"), cached in $cached"
    sed 's/^/  package /' "$cached/packages" >&2
    return 0
  fi
  uml_tried="$uml_tried
  - $(cat "$cached/origin" 2>/dev/null || echo "$cached") ($cached/root/usr/bin/linux.uml): $cached_out"
  return 1
}

lvmqos_uml_stop() {
  cat >&2 <<MSG
error: no user-mode-Linux kernel that boots on this machine could be had, so the real-kernel tests and the
demo cannot run. Tried:$uml_tried
Bring your own: set LVMQOS_UML=/path/to/linux.uml and LVMQOS_UML_MODULES=/path/to/its/modules/<release>
(a UML kernel with device-mapper and thin-pool modules, 6.1 or newer; on hosts whose CPU has AMX, 7.2 or
newer), or set LVMQOS_SKIP_UML=1 to skip the guest tests explicitly.
MSG
  return 1
}

lvmqos_pick_uml() {
  uml_tried=""
  if [ -n "${LVMQOS_UML:-}" ]; then
    if [ -z "${LVMQOS_UML_MODULES:-}" ]; then
      uml_tried="
  - LVMQOS_UML=$LVMQOS_UML: LVMQOS_UML_MODULES is not set (the directory of the kernel's modules)"
      lvmqos_uml_stop; return 1
    fi
    if own=$(lvmqos_uml_probe "$LVMQOS_UML" "$LVMQOS_UML_MODULES"); then
      lvmqos_uml_use "$LVMQOS_UML" "$LVMQOS_UML_MODULES" "$own" "yours, from LVMQOS_UML"
      return 0
    fi
    uml_tried="
  - LVMQOS_UML=$LVMQOS_UML (modules $LVMQOS_UML_MODULES): $own"
    lvmqos_uml_stop; return 1
  fi
  # A kernel fetched before, newest version first.
  for cached in $(ls -d "$LVMQOS_UML_CACHE"/*/ready 2>/dev/null | sed 's,/ready$,,' | sort -rV); do
    lvmqos_uml_try_cached "$cached" && return 0
  done
  if [ "$(id -u)" -eq 0 ]; then
    for suite in $LVMQOS_UML_SUITES; do
      if fetched=$(mkdir -p "$LVMQOS_UML_CACHE" && flock "$LVMQOS_UML_CACHE" sh -c '. "$0"; lvmqos_uml_fetch "$1"' \
          "$LVMQOS_SCRIPTS_DIR/lib.sh" "$suite"); then
        case "$uml_tried" in *"$fetched/"*) continue ;; esac # probed above already
        lvmqos_uml_try_cached "$fetched" && return 0
      else
        uml_tried="$uml_tried
  - user-mode-linux from Debian $suite: $fetched"
      fi
    done
  else
    uml_tried="$uml_tried
  - fetching a newer kernel: not root"
  fi
  # Debian 12's own, as the last resort.
  if system_uml=$(command -v linux.uml); then
    if system_out=$(lvmqos_uml_probe "$system_uml" /usr/lib/uml/modules); then
      lvmqos_uml_use "$system_uml" /usr/lib/uml/modules "$system_out" \
        "this system's user-mode-linux package (no newer kernel could be fetched; see above)"
      echo "warning: the tests normally use the newer kernel; they ran on this one:$uml_tried" >&2
      return 0
    fi
    uml_tried="$uml_tried
  - this system's $system_uml (package user-mode-linux): $system_out"
  fi
  lvmqos_uml_stop
}
