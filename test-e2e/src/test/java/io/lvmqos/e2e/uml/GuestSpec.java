package io.lvmqos.e2e.uml;

/**
 * A guest's configuration, of either kind ({@link UmlGuest.Builder}, {@code io.lvmqos.e2e.qemu.QemuGuest.Builder}),
 * that {@link GuestJUnit} boots with a payload of its own.
 */
public interface GuestSpec {
    /**
     * Boots a guest configured like this one but running {@code payload} (a command line for the guest's
     * {@code sh -c}), and returns once it has ended; this configuration is not changed.
     */
    GuestRun runWith(String payload);
}
