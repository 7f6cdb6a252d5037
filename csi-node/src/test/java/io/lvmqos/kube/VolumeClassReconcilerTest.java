package io.lvmqos.kube;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.lvmqos.errors.DriverException;
import io.lvmqos.kube.VolumeClassReconciler.AttributesClass;
import io.lvmqos.kube.VolumeClassReconciler.Outcome;
import io.lvmqos.kube.VolumeClassReconciler.Volume;
import io.lvmqos.volume.LvmNames;
import io.lvmqos.volume.VolumeId;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

class VolumeClassReconcilerTest {

    private static final String DRIVER = "lvmqos.csi.io";
    private static final Duration NOW = Duration.ofSeconds(1);
    private static final VolumeId ID = new VolumeId(VolumeId.Kind.VOLUME, "node-a", "lvmqos",
            LvmNames.volumeLvName("pvc-1"));
    private static final Map<String, String> FAST = Map.of("writeBPS", "200Mi", "readIOPS", "5000");

    private final RecordingModifier modifier = new RecordingModifier();
    private final VolumeClassReconciler reconciler = new VolumeClassReconciler(DRIVER, modifier);

    private static Volume volume(String className) {
        return new Volume("pv-1", ID, Optional.ofNullable(className));
    }

    private static AttributesClass fast() {
        return new AttributesClass("fast", DRIVER, FAST);
    }

    @Test
    void appliesTheClassOnceAndNotAgainForTheSameClass() throws Exception {
        reconciler.classSeen(fast());
        assertEquals(Outcome.APPLIED, reconciler.volumeSeen(volume("fast")));
        modifier.assertNext(ID, FAST, NOW);
        assertEquals(Outcome.UNCHANGED, reconciler.volumeSeen(volume("fast")));
        assertEquals(Outcome.UNCHANGED, reconciler.reconcile("pv-1").orElseThrow());
        assertEquals(1, modifier.calls());
    }

    @Test
    void aVolumeWithoutClassIsLeftAlone() {
        assertEquals(Outcome.NO_CLASS, reconciler.volumeSeen(volume(null)));
        assertEquals(0, modifier.calls());
    }

    @Test
    void aClassThatAppearsLaterIsAppliedToTheVolumesNamingIt() throws Exception {
        assertEquals(Outcome.CLASS_MISSING, reconciler.volumeSeen(volume("fast")));
        reconciler.volumeSeen(new Volume("pv-2", ID, Optional.of("slow")));
        assertEquals(Map.of("pv-1", Outcome.APPLIED), reconciler.classSeen(fast()));
        modifier.assertNext(ID, FAST, NOW);
    }

    @Test
    void switchingToAnotherClassAppliesItsParameters() throws Exception {
        Map<String, String> slow = Map.of("writeBPS", "10Mi");
        reconciler.classSeen(fast());
        reconciler.classSeen(new AttributesClass("slow", DRIVER, slow));
        reconciler.volumeSeen(volume("fast"));
        assertEquals(Outcome.APPLIED, reconciler.volumeSeen(volume("slow")));
        modifier.assertNext(ID, FAST, NOW);
        modifier.assertNext(ID, slow, NOW);
    }

    @Test
    void aClassRecreatedWithOtherParametersIsAppliedAgain() throws Exception {
        reconciler.classSeen(fast());
        reconciler.volumeSeen(volume("fast"));
        reconciler.classGone("fast");
        assertEquals(Map.of("pv-1", Outcome.UNCHANGED), reconciler.classSeen(fast()));
        Map<String, String> faster = Map.of("writeBPS", "400Mi");
        AttributesClass recreated = new AttributesClass("fast", DRIVER, faster);
        assertEquals(Map.of("pv-1", Outcome.APPLIED), reconciler.classSeen(recreated));
        modifier.assertNext(ID, FAST, NOW);
        modifier.assertNext(ID, faster, NOW);
    }

    @Test
    void aClassThatLiftsALimitWithMaxIsApplied() throws Exception {
        Map<String, String> unthrottled = Map.of("writeBPS", "max", "readIOPS", "max");
        reconciler.classSeen(new AttributesClass("unthrottled", DRIVER, unthrottled));
        assertEquals(Outcome.APPLIED, reconciler.volumeSeen(volume("unthrottled")));
        modifier.assertNext(ID, unthrottled, NOW);
    }

    @Test
    void aClassOfAnotherDriverIsNotApplied() {
        reconciler.classSeen(new AttributesClass("fast", "other.csi.io", FAST));
        assertEquals(Outcome.CLASS_OF_ANOTHER_DRIVER, reconciler.volumeSeen(volume("fast")));
        assertEquals(0, modifier.calls());
    }

    static Stream<Arguments> refusedParameters() {
        return Stream.of(
                Arguments.of(Map.of("writeBPS", "fast please")),
                Arguments.of(Map.of("replicas", "3")),
                Arguments.of(Map.of("readIOPS", "0")),
                Arguments.of(Map.of("iopsPerGiB", "10", "iops", "100")),
                Arguments.of(Map.of("writeIOPS", "1.5")),
                Arguments.of(Map.of("writeBPS", "unlimited")),
                Arguments.of(Map.of("iopsPerGiB", "10", "readIOPS", "max")));
    }

    @ParameterizedTest
    @MethodSource("refusedParameters")
    void invalidParametersAreSkippedWithoutCallingTheModifier(Map<String, String> parameters) {
        reconciler.classSeen(new AttributesClass("broken", DRIVER, parameters));
        assertEquals(Outcome.INVALID_PARAMETERS, reconciler.volumeSeen(volume("broken")));
        assertEquals(Outcome.UNCHANGED, reconciler.volumeSeen(volume("broken")), "logged once, not at every resync");
        assertEquals(0, modifier.calls());
    }

    @Test
    void aFailureThatMayPassIsNotRememberedSoTheNextAttemptAppliesIt() throws Exception {
        reconciler.classSeen(fast());
        modifier.failNext(DriverException.unavailable("lvm is busy"));
        assertEquals(Outcome.FAILED, reconciler.volumeSeen(volume("fast")));
        assertEquals(Outcome.APPLIED, reconciler.reconcile("pv-1").orElseThrow());
        modifier.assertNext(ID, FAST, NOW);
    }

    @Test
    void anUnexpectedFailureIsRetriedToo() {
        reconciler.classSeen(fast());
        modifier.failNext(new IllegalStateException("bug"));
        assertEquals(Outcome.FAILED, reconciler.volumeSeen(volume("fast")));
        assertEquals(Outcome.APPLIED, reconciler.volumeSeen(volume("fast")));
    }

    @Test
    void aRefusalIsRememberedUntilSomethingChanges() {
        reconciler.classSeen(fast());
        modifier.failNext(DriverException.notFound("volume does not exist"));
        assertEquals(Outcome.REFUSED, reconciler.volumeSeen(volume("fast")));
        assertEquals(Outcome.UNCHANGED, reconciler.volumeSeen(volume("fast")));
        assertEquals(1, modifier.calls());
    }

    @Test
    void aVolumeSeenAgainAfterItWasDeletedIsAppliedAgain() {
        reconciler.classSeen(fast());
        reconciler.volumeSeen(volume("fast"));
        reconciler.volumeGone("pv-1");
        assertTrue(reconciler.reconcile("pv-1").isEmpty());
        assertEquals(Outcome.APPLIED, reconciler.volumeSeen(volume("fast")));
        assertEquals(List.of(FAST, FAST), modifier.rest().stream().map(RecordingModifier.Applied::parameters).toList());
    }
}
