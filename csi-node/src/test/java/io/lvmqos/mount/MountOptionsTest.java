package io.lvmqos.mount;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import io.lvmqos.errors.DriverException;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.junit.jupiter.api.Test;

class MountOptionsTest {

    @Test
    void splitsGenericFlagsFromFilesystemData() {
        MountOptions options = MountOptions.parse(List.of("ro", "noatime", "nodev", "nosuid", "noexec", "sync",
                "discard", "nouuid", "errors=remount-ro"));
        assertEquals(Set.of(MountFlag.RDONLY, MountFlag.NOATIME, MountFlag.NODEV, MountFlag.NOSUID,
                MountFlag.NOEXEC, MountFlag.SYNCHRONOUS), options.flags());
        assertEquals(List.of("discard", "nouuid", "errors=remount-ro"), options.data());
        assertEquals(Optional.of("discard,nouuid,errors=remount-ro"), options.dataString());
    }

    @Test
    void theLastOfTwoOpposingOptionsWins() {
        assertEquals(Set.of(), MountOptions.parse(List.of("ro", "rw")).flags());
        assertEquals(Set.of(MountFlag.RDONLY), MountOptions.parse(List.of("rw", "ro")).flags());
        assertEquals(Set.of(MountFlag.NOSUID), MountOptions.parse(List.of("noexec", "nosuid", "exec")).flags());
    }

    @Test
    void userspaceOnlyOptionsAreDropped() {
        MountOptions options = MountOptions.parse(List.of("defaults", "nofail", "_netdev", "x-systemd.automount"));
        assertEquals(MountOptions.NONE, options);
        assertEquals(Optional.empty(), options.dataString());
    }

    @Test
    void repeatedDataOptionsAppearOnce() {
        assertEquals(List.of("discard"), MountOptions.parse(List.of("discard", "discard")).data());
    }

    @ParameterizedTest
    @ValueSource(strings = {"ro,exec", "", "no atime", "data=journal\n", "context=\"a,b\"", "a;b", "$(x)"})
    void refusesAnythingThatIsNotOneToken(String flag) {
        assertThrows(DriverException.InvalidArgument.class, () -> MountOptions.parse(List.of(flag)));
    }

    @ParameterizedTest
    @ValueSource(strings = {"bind", "rbind", "remount", "move", "shared", "rslave", "private"})
    void refusesOptionsThatChangeTheKindOfMount(String flag) {
        assertThrows(DriverException.InvalidArgument.class, () -> MountOptions.parse(List.of(flag)));
    }

    @Test
    void addsDriverOptions() {
        MountOptions options = MountOptions.parse(List.of("noatime")).with(MountFlag.RDONLY).withData("nouuid");
        assertEquals(Set.of(MountFlag.NOATIME, MountFlag.RDONLY), options.flags());
        assertEquals(List.of("nouuid"), options.withData("nouuid").data());
    }
}
