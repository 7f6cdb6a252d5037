# Shared by ./run-tests and ./demo: install what the real-kernel tests need and pick a JDK >= 21.
# Sourced, not executed.

REQUIRED_PACKAGES="lvm2 thin-provisioning-tools user-mode-linux uml-utilities kmod e2fsprogs xfsprogs fio util-linux maven"

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

# Sets JAVA_HOME to a JDK of version 21 or newer: $JAVA_HOME if it qualifies, else the newest under /usr/lib/jvm.
lvmqos_pick_jdk() {
  if [ -n "${JAVA_HOME:-}" ] && [ -x "$JAVA_HOME/bin/javac" ]; then
    major=$(lvmqos_java_major "$JAVA_HOME/bin/java")
    if [ "${major:-0}" -ge 21 ] 2>/dev/null; then export JAVA_HOME; return 0; fi
  fi
  best=""; best_major=0
  for home in /usr/lib/jvm/*; do
    [ -x "$home/bin/javac" ] || continue
    major=$(lvmqos_java_major "$home/bin/java")
    if [ "${major:-0}" -gt "$best_major" ] 2>/dev/null; then best="$home"; best_major="$major"; fi
  done
  if [ "$best_major" -lt 21 ]; then
    echo "error: no JDK 21 or newer found (JAVA_HOME=${JAVA_HOME:-unset}; looked in /usr/lib/jvm). Install one, e.g. Temurin 21+, and set JAVA_HOME." >&2
    return 1
  fi
  export JAVA_HOME="$best"
  echo "using JDK $best_major at $JAVA_HOME" >&2
}
