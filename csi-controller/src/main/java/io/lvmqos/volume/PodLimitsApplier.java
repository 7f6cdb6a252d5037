package io.lvmqos.volume;

/**
 * Puts a volume's limits in force, now, in the cgroups of the pods that use it, in place and with
 * no remount. The node side implements it (it knows the pods, their cgroups and the publish
 * mounts); this module only declares what it needs, so that a change of limits
 * ({@code QosModifier}, reached by ControllerModifyVolume and by the VolumeAttributesClass
 * watcher alike) and a resize reach running pods without this module depending on the node's.
 */
@FunctionalInterface
public interface PodLimitsApplier {

    /** Rewrites the volume's current limits ({@link ManagedVolume#limits()}) for every pod using it. */
    void applyToPodsUsing(ManagedVolume volume);

    /** For a controller with no pods of its own to reach. */
    PodLimitsApplier NONE = volume -> { };
}
