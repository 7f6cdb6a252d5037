#!/bin/sh
# Runs kubernetes-csi's csi-sanity against lvmqos inside a user-mode-Linux node.
#   test-e2e/csi-sanity.sh /path/to/csi-sanity [extra csi-sanity flags, e.g. --ginkgo.focus=Node]
# The binary is yours: lvmqos neither ships nor builds it (see README, "Conformance").
set -eu
if [ $# -lt 1 ] || [ ! -x "$1" ]; then
  cat >&2 <<'MSG'
usage: test-e2e/csi-sanity.sh /path/to/csi-sanity [extra flags]

csi-sanity is not part of lvmqos and lvmqos does not build it: get a csi-sanity binary of
kubernetes-csi/csi-test v5.4.0 or later (v5.3.1 rejects the driver's SNAPSHOT_METADATA_SERVICE
capability) as that project documents, then run this script with its path.
MSG
  exit 2
fi
binary=$(readlink -f "$1"); shift
cd "$(dirname "$0")/.."
. scripts/lib.sh
lvmqos_install_packages
lvmqos_pick_jdk
lvmqos_pick_uml
[ -f csi-node/target/lvmqos.jar ] || mvn -B -q package -DskipTests
exec mvn -B -pl test-e2e -am verify -Dtest=NONE -Dsurefire.failIfNoSpecifiedTests=false \
  -Dit.test=CsiSanityIT -Dcsi.sanity.binary="$binary" -Dcsi.sanity.args="$*"
