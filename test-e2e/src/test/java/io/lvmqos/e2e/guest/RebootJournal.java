package io.lvmqos.e2e.guest;

import static java.nio.charset.StandardCharsets.UTF_8;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.Arrays;
import java.util.List;

/**
 * What the guest before a reboot did, for the guest after it: one line per fact, each written
 * and fsynced before the fact it records can be relied on, so that a power cut leaves a journal
 * that holds at most what was durable. It lives in the first guest's out/ on the host (hostfs
 * writes reach the host file at once), which the second guest reads at the same path.
 *
 * <p>Lines, blank-separated words: {@code volume <id> <podUid> <staging> <target> <io.max fragment>},
 * {@code file <volumeId> <name> <sha256>}, {@code wipe <volumeId> <bytes zeroed>},
 * {@code create-start <csiName>}, {@code create-done <csiName> <id>}, {@code cut-missed <attempt>}
 * (an lvcreate that ended before its moment came), {@code cut <where it landed>}.
 */
public final class RebootJournal {
    /** The host's seed for the moment of the cut, required in the first guest. */
    public static final String SEED_ENV = "LVMQOS_REBOOT_SEED";
    /** The word of the {@code cut} line that names the lvcreate stopped inside its run, followed by its pid. */
    static final String LANDED = "landed-in-stopped-lvcreate=";
    /** The payload's variable naming the first guest's journal, in the second guest. */
    static final String JOURNAL_ENV = "LVMQOS_REBOOT_JOURNAL";
    /** clean (halt) or cut (SIGKILL of the whole UML process tree). */
    static final String MODE_ENV = "LVMQOS_REBOOT_MODE";
    /** The file in out/ whose appearance tells the host to cut the guest's power. */
    static final String CUT_MARKER = "cut-power-now";
    public static final String FILE = "reboot-journal";

    private final Path file;

    RebootJournal(Path file) {
        this.file = file;
    }

    synchronized void append(String... words) {
        byte[] line = (String.join(" ", words) + "\n").getBytes(UTF_8);
        try (FileChannel channel = FileChannel.open(file, StandardOpenOption.CREATE, StandardOpenOption.WRITE,
                StandardOpenOption.APPEND)) {
            channel.write(ByteBuffer.wrap(line));
            channel.force(true);
        } catch (IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
    }

    /** Every complete line of one kind, split into words (the kind dropped). */
    List<List<String>> entries(String kind) throws IOException {
        String text = Files.readString(file, UTF_8);
        // a line cut short by the power cut has no newline: it is not a fact
        String complete = text.substring(0, text.lastIndexOf('\n') + 1);
        return complete.lines().map(line -> Arrays.asList(line.split(" ")))
                .filter(words -> words.getFirst().equals(kind))
                .map(words -> List.copyOf(words.subList(1, words.size())))
                .toList();
    }

    /**
     * The pid of the lvcreate the cut landed in, as the first guest's journal records it; empty if
     * the journal has no complete {@code cut} line naming one.
     */
    public static java.util.OptionalLong landedIn(Path journal) throws IOException {
        return new RebootJournal(journal).entries("cut").stream()
                .flatMap(List::stream)
                .filter(word -> word.startsWith(LANDED))
                .mapToLong(word -> Long.parseLong(word.substring(LANDED.length())))
                .findFirst();
    }
}
