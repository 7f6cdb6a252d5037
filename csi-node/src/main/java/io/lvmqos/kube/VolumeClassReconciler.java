package io.lvmqos.kube;

import io.lvmqos.errors.DriverException;
import io.lvmqos.volume.QosParameters;
import io.lvmqos.volume.VolumeId;
import java.util.Collections;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Decides, from what the API server says, which VolumeAttributesClass each of this node's volumes
 * should carry, and applies it once per change. Knows nothing of the Kubernetes client: the
 * watcher hands it plain records. Confined to one thread (the watcher's worker).
 *
 * <p>What was applied is remembered per PersistentVolume, so that the watcher's periodic resync
 * costs nothing; it is forgotten on restart, so a restarted plugin applies every class once
 * more, which the modifier makes a no-op when the LV already carries the limits.
 */
final class VolumeClassReconciler {

    private static final Logger log = LoggerFactory.getLogger(VolumeClassReconciler.class);

    /** A PersistentVolume of this driver whose volume lives on this node. */
    record Volume(String pvName, VolumeId id, Optional<String> className) {
        Volume {
            Objects.requireNonNull(pvName);
            Objects.requireNonNull(id);
            Objects.requireNonNull(className);
        }
    }

    /** A VolumeAttributesClass, of any driver. */
    record AttributesClass(String name, String driverName, Map<String, String> parameters) {
        AttributesClass {
            Objects.requireNonNull(name);
            Objects.requireNonNull(driverName);
            parameters = Map.copyOf(parameters);
        }
    }

    enum Outcome {
        APPLIED,
        /** This very class, with these parameters, was already applied (or refused) for this volume. */
        UNCHANGED,
        NO_CLASS,
        CLASS_MISSING,
        CLASS_OF_ANOTHER_DRIVER,
        INVALID_PARAMETERS,
        /** The modifier refused for good (the LV does not exist, say); tried again only on a change. */
        REFUSED,
        /** The modifier failed in a way that may pass; the caller should try again later. */
        FAILED
    }

    /** Everything the outcome for one volume depends on: when it is equal, so is the outcome. */
    private record Wanted(VolumeId id, Optional<String> className, Optional<AttributesClass> attributesClass) {
    }

    private final String driverName;
    private final VolumeModifier modifier;
    private final Map<String, Volume> volumes = new HashMap<>();
    private final Map<String, AttributesClass> classes = new HashMap<>();
    private final Map<String, Wanted> settled = new HashMap<>();

    VolumeClassReconciler(String driverName, VolumeModifier modifier) {
        this.driverName = Objects.requireNonNull(driverName);
        this.modifier = Objects.requireNonNull(modifier);
    }

    Outcome volumeSeen(Volume volume) {
        volumes.put(volume.pvName(), volume);
        return reconcile(volume.pvName()).orElseThrow();
    }

    void volumeGone(String pvName) {
        volumes.remove(pvName);
        settled.remove(pvName);
    }

    /** The PersistentVolumes known. */
    Set<String> volumeNames() {
        return Collections.unmodifiableSet(volumes.keySet());
    }

    /** After a list: forgets the volumes it did not name (deleted while nothing watched). */
    void retainVolumes(Set<String> listed) {
        for (String pvName : Set.copyOf(volumes.keySet())) {
            if (!listed.contains(pvName)) {
                volumeGone(pvName);
            }
        }
    }

    /** After a list: forgets the classes it did not name. */
    void retainClasses(Set<String> listed) {
        classes.keySet().retainAll(listed);
    }

    /** Applies the class to every volume that names it; the outcome per PersistentVolume. */
    Map<String, Outcome> classSeen(AttributesClass attributesClass) {
        classes.put(attributesClass.name(), attributesClass);
        Map<String, Outcome> outcomes = new LinkedHashMap<>();
        for (Volume volume : volumes.values()) {
            if (volume.className().equals(Optional.of(attributesClass.name()))) {
                outcomes.put(volume.pvName(), reconcile(volume.pvName()).orElseThrow());
            }
        }
        return outcomes;
    }

    /**
     * Kubernetes keeps a class while a claim uses it; if one goes anyway, the volumes keep the
     * limits it gave them.
     */
    void classGone(String name) {
        classes.remove(name);
    }

    /** Brings one PersistentVolume to its class again; empty when it is no longer known. */
    Optional<Outcome> reconcile(String pvName) {
        Volume volume = volumes.get(pvName);
        if (volume == null) {
            return Optional.empty();
        }
        Optional<AttributesClass> attributesClass = volume.className().map(classes::get);
        Wanted wanted = new Wanted(volume.id(), volume.className(), attributesClass);
        if (wanted.equals(settled.get(pvName))) {
            return Optional.of(Outcome.UNCHANGED);
        }
        Outcome outcome = apply(volume, attributesClass);
        if (outcome == Outcome.FAILED) {
            settled.remove(pvName);
        } else {
            settled.put(pvName, wanted);
        }
        return Optional.of(outcome);
    }

    private Outcome apply(Volume volume, Optional<AttributesClass> found) {
        if (volume.className().isEmpty()) {
            return Outcome.NO_CLASS;
        }
        String className = volume.className().get();
        if (found.isEmpty()) {
            log.info("PV {} ({}) names VolumeAttributesClass {}, which does not exist (yet): its limits stay as they"
                    + " are until the class appears", volume.pvName(), volume.id(), className);
            return Outcome.CLASS_MISSING;
        }
        AttributesClass attributesClass = found.get();
        if (!attributesClass.driverName().equals(driverName)) {
            log.warn("PV {} ({}) names VolumeAttributesClass {}, which is for driver {}, not {}: not applied",
                    volume.pvName(), volume.id(), className, attributesClass.driverName(), driverName);
            return Outcome.CLASS_OF_ANOTHER_DRIVER;
        }
        try {
            QosParameters.parseMutable(attributesClass.parameters());
        } catch (DriverException e) {
            log.warn("VolumeAttributesClass {} has parameters this driver refuses ({}): PV {} ({}) keeps its limits",
                    className, e.getMessage(), volume.pvName(), volume.id());
            return Outcome.INVALID_PARAMETERS;
        }
        try {
            modifier.modify(volume.id(), attributesClass.parameters());
        } catch (DriverException.Unavailable | DriverException.Aborted | DriverException.DeadlineExceeded
                 | DriverException.Internal e) {
            log.warn("PV {} ({}): applying VolumeAttributesClass {} failed, will retry: {}", volume.pvName(),
                    volume.id(), className, e.getMessage());
            return Outcome.FAILED;
        } catch (DriverException e) {
            log.warn("PV {} ({}): VolumeAttributesClass {} not applied: {}", volume.pvName(), volume.id(), className,
                    e.getMessage());
            return Outcome.REFUSED;
        } catch (RuntimeException e) {
            log.warn("PV {} ({}): applying VolumeAttributesClass {} failed unexpectedly, will retry", volume.pvName(),
                    volume.id(), className, e);
            return Outcome.FAILED;
        }
        log.info("PV {} ({}): applied VolumeAttributesClass {} {}", volume.pvName(), volume.id(), className,
                new TreeMap<>(attributesClass.parameters()));
        return Outcome.APPLIED;
    }
}
