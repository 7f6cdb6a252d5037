package io.lvmqos.e2e.demo;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.Optional;
import org.junit.jupiter.api.Test;

class IoMaxAtUnpublishTest {

    private static final Optional<String> LINE = Optional.of("254:2 rbps=8388608 wbps=8388608 riops=max wiops=max");

    @Test
    void aLimitedVolumesLineThatWentIsLifted() {
        IoMaxAtUnpublish seen = new IoMaxAtUnpublish(LINE, Optional.empty(), true);
        assertEquals("lifted", seen.shown());
        assertEquals(Optional.empty(), seen.failure());
    }

    @Test
    void anUnlimitedVolumeNeverHadALineSoNothingIsLifted() {
        IoMaxAtUnpublish seen = new IoMaxAtUnpublish(Optional.empty(), Optional.empty(), false);
        assertEquals("none, before or after (no limits)", seen.shown());
        assertEquals(Optional.empty(), seen.failure());
    }

    @Test
    void aLineLeftBehindIsAFailure() {
        IoMaxAtUnpublish seen = new IoMaxAtUnpublish(LINE, LINE, true);
        assertEquals("STILL THERE", seen.shown());
        assertEquals(Optional.of("has \"" + LINE.get() + "\" after the unpublish"), seen.failure());
    }

    @Test
    void aLimitedVolumeWithoutALineBeforeTheUnpublishIsAFailureNotALift() {
        IoMaxAtUnpublish seen = new IoMaxAtUnpublish(Optional.empty(), Optional.empty(), true);
        assertEquals("MISSING already before the unpublish", seen.shown());
        assertEquals(Optional.of("had no line for the limited volume's device before the unpublish"), seen.failure());
    }

    @Test
    void aLineOnAnUnlimitedVolumeIsAFailureEvenWhenItGoes() {
        IoMaxAtUnpublish seen = new IoMaxAtUnpublish(LINE, Optional.empty(), false);
        assertEquals("lifted", seen.shown());
        assertEquals(Optional.of("had \"" + LINE.get() + "\" though the volume has no limits"), seen.failure());
    }

    @Test
    void aLineThatAppearsAtTheUnpublishIsAFailure() {
        IoMaxAtUnpublish seen = new IoMaxAtUnpublish(Optional.empty(), LINE, false);
        assertEquals("APPEARED at the unpublish", seen.shown());
        assertEquals(Optional.of("has \"" + LINE.get() + "\" after the unpublish"), seen.failure());
    }
}
