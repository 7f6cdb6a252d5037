package io.lvmqos.device;

import io.lvmqos.errors.DriverException;
import io.lvmqos.exec.Command;
import io.lvmqos.exec.CommandResult;
import io.lvmqos.exec.CommandRunner;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * The blkid boundary: tells a blank block device from one that holds anything at all.
 *
 * <p>Formatting is the one irreversible thing the node plugin does, so "blank" is answered only
 * on positive evidence. {@code blkid -p} probes the device itself (no cache, no udev database) for
 * every superblock and partition-table signature libblkid knows, at both ends of the device. Its
 * exit status is the evidence: 0 found something, 2 found nothing, 8 found several signatures
 * (ambiguous, so not blank), anything else is a failure. blkid also exits 2 for a path it
 * cannot open, so before believing a 2 the device is opened and its first block read here:
 * a missing, unreadable or non-block path is an error, never "blank".
 *
 * <p>No zero-scan of the first MiB is done on top: an LV handed out by the controller has had
 * its signatures wiped, but a linear LV's other bytes are whatever the disk held before, and
 * refusing to format those would make such volumes unusable. Unknown data with no signature is
 * the same thing mkfs itself would overwrite.
 */
public final class BlockDeviceProbe {

    private static final Duration TIMEOUT = Duration.ofSeconds(30);
    private static final int EXIT_FOUND = 0;
    private static final int EXIT_NOTHING = 2;
    private static final int EXIT_AMBIGUOUS = 8;

    private final CommandRunner runner;
    private final Path blkid;
    private final Duration timeout;

    public BlockDeviceProbe(CommandRunner runner, Path blkidProgram, Duration timeout) {
        this.runner = runner;
        this.blkid = blkidProgram;
        this.timeout = timeout;
    }

    public static BlockDeviceProbe onThisHost(CommandRunner runner) {
        return new BlockDeviceProbe(runner, CommandRunner.locate("blkid"), TIMEOUT);
    }

    public DeviceContents probe(Path device) {
        DeviceNumber.of(device);
        readFirstBlock(device);
        CommandResult result = runner.run(Command.of(blkid, timeout, "-p", "-o", "export", "--", device.toString()));
        return switch (result.exitCode()) {
            case EXIT_NOTHING -> new DeviceContents.Blank();
            case EXIT_FOUND -> classify(parseExport(result.stdout()));
            case EXIT_AMBIGUOUS -> new DeviceContents.Other(
                    "several conflicting signatures (blkid: " + result.diagnostic() + ")", Map.of());
            default -> throw DriverException.internal("cannot tell whether " + device + " is blank: "
                    + result.command().display() + " exited " + result.exitCode() + ": " + result.diagnostic());
        };
    }

    static DeviceContents classify(Map<String, String> tags) {
        String type = tags.get("TYPE");
        String usage = tags.getOrDefault("USAGE", "");
        String ptType = tags.get("PTTYPE");
        if (type != null && usage.equals("filesystem")) {
            return new DeviceContents.Filesystem(type);
        }
        if (type != null) {
            return new DeviceContents.Other(type + (usage.isEmpty() ? "" : " (" + usage + ")"), tags);
        }
        if (ptType != null) {
            return new DeviceContents.PartitionTable(ptType);
        }
        // blkid exited 0 but named nothing we understand: still not blank.
        return new DeviceContents.Other("an unidentified signature " + tags, tags);
    }

    /** Parses {@code blkid -o export}: KEY=value lines, values with shell-style escapes. */
    static Map<String, String> parseExport(String text) {
        Map<String, String> tags = new LinkedHashMap<>();
        for (String line : text.split("\n")) {
            int eq = line.indexOf('=');
            if (eq > 0) {
                tags.put(line.substring(0, eq), unescape(line.substring(eq + 1)));
            }
        }
        return tags;
    }

    private static String unescape(String value) {
        StringBuilder out = new StringBuilder(value.length());
        for (int i = 0; i < value.length(); i++) {
            char c = value.charAt(i);
            if (c == '\\' && i + 1 < value.length()) {
                c = value.charAt(++i);
            }
            out.append(c);
        }
        return out.toString();
    }

    private static void readFirstBlock(Path device) {
        try (FileChannel channel = FileChannel.open(device, StandardOpenOption.READ)) {
            channel.read(ByteBuffer.allocate(4096), 0);
        } catch (IOException e) {
            throw DriverException.unavailable("cannot read block device " + device
                    + ", so cannot tell whether it is blank: " + e);
        }
    }
}
