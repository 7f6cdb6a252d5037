/**
 * The second kind of real-kernel test node: Debian's stock kernel (6.1 on Debian 12: io.cost, BFQ
 * group scheduling, PSI, which user-mode Linux lacks) under qemu's software emulation.
 *
 * <p>{@link io.lvmqos.e2e.qemu.QemuGuest} boots one guest per {@code run()} with the kernel, initramfs
 * and modules that {@code scripts/qemu.sh}'s {@code lvmqos_pick_qemu} fetched and proved
 * ({@code LVMQOS_QEMU_KERNEL}, {@code LVMQOS_QEMU_INITRD}, {@code LVMQOS_QEMU_MODULES}); ./run-tests
 * calls it. Its init script, run directory, stage markers, failures and result are the UML guest's
 * (package {@code io.lvmqos.e2e.uml}), so a guest-side {@code *Check} runs in either kind:
 * {@code GuestJUnit.dynamicTests(QemuGuest.builder().disk("4G").volumeGroup("lvmqos", 0), MyCheck.class)}.
 * {@code -Dlvmqos.qemu.echo=true} copies the console to standard output as it runs;
 * {@code LVMQOS_SKIP_QEMU=1} skips every qemu guest test explicitly.
 */
package io.lvmqos.e2e.qemu;
