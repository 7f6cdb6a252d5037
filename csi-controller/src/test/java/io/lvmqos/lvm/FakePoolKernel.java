package io.lvmqos.lvm;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.List;

/**
 * Stand-ins for dmsetup and thin_dump at the OS boundary, over one thin pool whose metadata
 * snapshot is a directory: reserve makes it (and fails when it exists), release removes it (and
 * fails when there is none), as the kernel answers. thin_dump waits, once it has started, until
 * the test lets it go on, and then fails as the real one does when the snapshot is gone. Every
 * step is appended to a log, in the order the programs ran.
 */
final class FakePoolKernel {

    private final Path dir;

    FakePoolKernel(Path dir) {
        this.dir = dir;
        write("dmsetup", """
                #!/bin/sh
                d=%1$s
                case "$1 $4" in
                  "message reserve_metadata_snap") mkdir "$d/snap" 2>/dev/null || { echo "reserve refused: snapshot held" >&2; exit 1; } ;;
                  "message release_metadata_snap") echo release >> "$d/log"; rmdir "$d/snap" 2>/dev/null || exit 1 ;;
                  "status "*) if [ -e "$d/unloaded" ]; then printf 'Device does not exist.\nCommand failed.\n' >&2; exit 1; fi
                      echo "0 65536 thin-pool 3 10/4096 0/256 - rw discard_passdown queue_if_no_space - 1024" ;;
                  *) exit 1 ;;
                esac
                """.formatted(dir));
        write("thin_dump", """
                #!/bin/sh
                d=%1$s
                echo dump-start >> "$d/log"
                touch "$d/dumping"
                while [ ! -e "$d/go" ]; do sleep 0.01; done
                if [ ! -d "$d/snap" ]; then echo dump-found-no-snapshot >> "$d/log"; echo "no current metadata snap" >&2; exit 1; fi
                echo '<superblock uuid="" time="1" transaction="3" flags="0" version="2" data_block_size="128" nr_data_blocks="256">'
                echo '  <device dev_id="1" mapped_blocks="0" transaction="0" creation_time="0" snap_time="0">'
                echo '  </device>'
                echo '</superblock>'
                echo dump-end >> "$d/log"
                """.formatted(dir));
    }

    Path program(String name) {
        return dir.resolve(name);
    }

    /** A snapshot reserved by no one the test made: a killed run's. */
    void holdSnapshot() {
        try {
            Files.createDirectories(dir.resolve("snap"));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** The pool's target gone from the kernel, as after a reboot, while lvs may still call the pool active. */
    void unload() {
        try {
            Files.createFile(dir.resolve("unloaded"));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    boolean dumping() {
        return Files.exists(dir.resolve("dumping"));
    }

    boolean released() {
        return log().contains("release");
    }

    void letTheDumpGoOn() {
        try {
            Files.createFile(dir.resolve("go"));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    List<String> log() {
        try {
            Path log = dir.resolve("log");
            return Files.exists(log) ? Files.readAllLines(log) : List.of();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private void write(String name, String script) {
        try {
            Path file = dir.resolve(name);
            Files.writeString(file, script);
            Files.setPosixFilePermissions(file, PosixFilePermissions.fromString("rwxr-xr-x"));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
