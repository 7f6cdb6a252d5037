package io.lvmqos.device;

import io.lvmqos.exec.Command;
import io.lvmqos.exec.CommandResult;
import io.lvmqos.exec.CommandRunner;
import java.io.IOException;
import java.io.RandomAccessFile;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;

/** A loop device on a sparse file, for tests on the host kernel; close() detaches it and deletes the file. */
public final class LoopDevice implements AutoCloseable {

    private static final Duration TIMEOUT = Duration.ofSeconds(30);
    private static final CommandRunner RUNNER = new CommandRunner();

    private final Path backingFile;
    private final Path device;

    private LoopDevice(Path backingFile, Path device) {
        this.backingFile = backingFile;
        this.device = device;
    }

    public static LoopDevice create(Path directory, String name, long bytes) throws IOException {
        Path file = directory.resolve(name + ".img");
        try (RandomAccessFile raf = new RandomAccessFile(file.toFile(), "rw")) {
            raf.setLength(bytes);
        }
        CommandResult result = runOrFail(Command.of(CommandRunner.locate("losetup"), TIMEOUT,
                "--find", "--show", "--", file.toString()));
        return new LoopDevice(file, Path.of(result.stdout().strip()));
    }

    /** Runs a command of a test's setup; one that fails fails the test with its own words. */
    static CommandResult runOrFail(Command command) {
        CommandResult result = RUNNER.run(command);
        if (!result.succeeded()) {
            throw new AssertionError(command.display() + " exited " + result.exitCode() + ": " + result.diagnostic());
        }
        return result;
    }

    public Path path() {
        return device;
    }

    public Path backingFile() {
        return backingFile;
    }

    public DeviceNumber number() {
        return DeviceNumber.of(device);
    }

    /** Enlarges the backing file and tells the loop driver to see the new size (losetup -c). */
    public void grow(long bytes) throws IOException {
        try (RandomAccessFile raf = new RandomAccessFile(backingFile.toFile(), "rw")) {
            raf.setLength(bytes);
        }
        runOrFail(Command.of(CommandRunner.locate("losetup"), TIMEOUT, "--set-capacity", device.toString()));
    }

    public long sizeBytes() throws IOException {
        String name = device.getFileName().toString();
        return Long.parseLong(Files.readString(Path.of("/sys/block", name, "size")).strip()) * 512;
    }

    @Override
    public void close() throws IOException {
        try {
            runOrFail(Command.of(CommandRunner.locate("losetup"), TIMEOUT, "--detach", device.toString()));
        } finally {
            Files.deleteIfExists(backingFile);
        }
    }
}
