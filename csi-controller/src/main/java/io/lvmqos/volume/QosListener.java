package io.lvmqos.volume;

/**
 * Told when a volume's limits change (ControllerModifyVolume), so that the node side rewrites
 * them in the cgroups of the pods using the volume, in place, with no remount.
 */
@FunctionalInterface
public interface QosListener {

    void limitsChanged(ManagedVolume volume);

    QosListener NONE = volume -> { };
}
