package io.lvmqos.kube;

import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.client.informers.cache.ItemStore;
import java.util.Objects;
import java.util.function.Predicate;
import java.util.stream.Stream;

/**
 * An informer's store that keeps only the objects a test accepts, so that what the informer holds
 * grows with what this process needs rather than with the cluster. Every PersistentVolume of every
 * node and driver still passes through (the API has no selector for a CSI driver or a volume
 * handle); only this node's volumes of this driver stay.
 *
 * <p>Sound only for a test on fields that never change once the object exists (a PersistentVolume's
 * {@code spec.csi} is immutable): an object refused once is refused at every event, so an update of
 * it reads to the informer as an add, a deletion of it as nothing, and a relist drops nothing that
 * was kept. It says it is not the full state, so the informer hands each listed object on at once
 * instead of keeping every listed key until the list ends.
 */
final class KeptItemStore<V extends HasMetadata> implements ItemStore<V> {

    private final ItemStore<V> kept;
    private final Predicate<V> keep;

    KeptItemStore(ItemStore<V> kept, Predicate<V> keep) {
        this.kept = Objects.requireNonNull(kept);
        this.keep = Objects.requireNonNull(keep);
    }

    @Override
    public String getKey(V object) {
        return kept.getKey(object);
    }

    @Override
    public V put(String key, V object) {
        return keep.test(object) ? kept.put(key, object) : null;
    }

    @Override
    public V remove(String key) {
        return kept.remove(key);
    }

    @Override
    public Stream<String> keySet() {
        return kept.keySet();
    }

    @Override
    public Stream<V> values() {
        return kept.values();
    }

    @Override
    public int size() {
        return kept.size();
    }

    @Override
    public V get(String key) {
        return kept.get(key);
    }

    @Override
    public boolean isFullState() {
        return false;
    }
}
