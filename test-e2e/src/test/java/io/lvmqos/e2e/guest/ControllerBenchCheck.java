package io.lvmqos.e2e.guest;

import static io.lvmqos.e2e.bench.BenchReport.mean;
import static io.lvmqos.e2e.bench.BenchReport.ms;
import static io.lvmqos.e2e.bench.BenchReport.percentile;
import static io.lvmqos.e2e.guest.Csi2.MIB;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import csi.v1.ControllerGrpc;
import csi.v1.Csi;
import io.grpc.StatusRuntimeException;
import io.lvmqos.e2e.CsiClient;
import io.lvmqos.e2e.bench.BenchReport;
import io.lvmqos.e2e.uml.GuestCommand;
import io.lvmqos.e2e.uml.GuestEnv;
import io.lvmqos.volume.LvmNames;
import io.lvmqos.volume.VolumeTags;
import java.io.IOException;
import java.io.RandomAccessFile;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Guest side of ControllerBenchmark (issue 3): CreateVolume and DeleteVolume through the driver,
 * beside exactly the lvm (and blkdiscard) commands the driver ran for each call, run by fork/exec
 * from this JVM in the same state. Which commands the driver ran, with which arguments, is read from
 * its own debug log ({@code CommandRunner} at debug, one line per command with its argv, exit code
 * and duration), so the replay cannot drift from the code; the replay runs after the driver's call
 * on even calls and before it on odd ones (see {@link #measure}). Then 50 thin creates issued at
 * once from 50 threads, and their 50 deletes, with each call's outcome. Writes {@value #REPORT}.md
 * into the guest's output directory; it measures and reports, it does not assert times.
 */
public class ControllerBenchCheck {

    public static final String REPORT = "controller";

    private static final int WARMUP = 3;
    private static final int CALLS = 30;
    private static final int CONCURRENT = 50;
    private static final long SIZE = 8 * MIB;
    private static final Duration COMMAND_TIMEOUT = Duration.ofMinutes(2);
    /** Background threads of the driver whose lvm commands belong to no RPC. */
    private static final Set<String> BACKGROUND_THREADS = Set.of("health-check", "startup");
    /**
     * SimpleLogger with thread names: "... [thread] DEBUG CommandRunner - argv exited 0 in 45 ms", or
     * LvmShell for a command run in one of the driver's lvm shells (the line then ends with the shell's pid).
     */
    private static final Pattern COMMAND_LINE =
            Pattern.compile("\\[([^\\]]*)\\] DEBUG (?:CommandRunner|LvmShell) - (.*) exited (-?\\d+) in (\\d+) ms");

    @BeforeAll
    static void onlyInTheGuest() {
        GuestEnv.assumeInGuest();
    }

    /** One command the driver ran, as its log says. */
    private record Logged(List<String> argv, int exitCode, long driverMillis) {
        String label() {
            String program = Path.of(argv.getFirst()).getFileName().toString();
            return program.equals("lvm") ? argv.get(1) : program;
        }
    }

    /** One call through the driver and the same commands run directly. */
    private record Call(long driverNanos, List<Logged> commands, long[] directNanos) {
        long directSum() {
            return Arrays.stream(directNanos).sum();
        }

        long loggedSum() {
            return commands.stream().mapToLong(Logged::driverMillis).sum();
        }

        List<String> shape() {
            return commands.stream().map(Logged::label).toList();
        }
    }

    @Test
    void createAndDeleteBesideTheirLvmCommands() throws Exception {
        Path log = GuestEnv.outDir().resolve("driver-controller-bench.log");
        // one line per external command, with its argv and duration; nothing else becomes louder
        List<String> logging = List.of("-Dorg.slf4j.simpleLogger.log.io.lvmqos.exec.CommandRunner=debug",
                "-Dorg.slf4j.simpleLogger.log.io.lvmqos.lvm.LvmShell=debug",
                "-Dorg.slf4j.simpleLogger.showThreadName=true");
        try (GuestDriver driver = GuestDriver.start(GuestDriver.Options.standard().log(log).jvmFlags(logging)
                .awaitingReady())) {
            CsiClient client = driver.client();
            LogTail tail = new LogTail(log);
            Map<String, String> thin = Map.of("lvmType", "thin");
            Map<String, String> linear = Map.of();
            Measured lastThin = null;
            Measured lastLinear = null;
            for (int i = 0; i < WARMUP; i++) {
                lastThin = measure(client, tail, "warm-thin-" + i, thin, Optional.empty());
                lastLinear = measure(client, tail, "warm-linear-" + i, linear, Optional.empty());
            }
            List<Call[]> thinCalls = new ArrayList<>();
            List<Call[]> linearCalls = new ArrayList<>();
            // thin and linear alternated, so that both kinds see the same background load; the
            // replay runs after the driver on even calls and before it on odd ones
            for (int i = 0; i < CALLS; i++) {
                lastThin = measure(client, tail, "bench-thin-" + i, thin,
                        i % 2 == 1 ? Optional.of(lastThin) : Optional.empty());
                lastLinear = measure(client, tail, "bench-linear-" + i, linear,
                        i % 2 == 1 ? Optional.of(lastLinear) : Optional.empty());
                thinCalls.add(lastThin.calls());
                linearCalls.add(lastLinear.calls());
            }
            double[] spawn = spawnFloor();
            Concurrent creates = concurrentCreates(client);
            List<String> ids = completeCreates(client, creates);
            Concurrent deletes = concurrentDeletes(client, ids);
            completeDeletes(client, deletes, ids);
            String leftover = GuestCommand.ok("lvm", "lvs", "--noheadings", "-o", "lv_name", GuestEnv.volumeGroup());
            assertTrue(leftover.lines().map(String::strip).noneMatch(l -> l.startsWith("vol_")),
                    "every benchmark volume was deleted: " + leftover);
            String md = report(thinCalls, linearCalls, spawn, creates, deletes);
            BenchReport.writeTo(GuestEnv.outDir(), REPORT, md);
            driver.process().terminate(Duration.ofSeconds(20));
        }
    }

    /** A measured create and delete of one CSI name: {create, delete}. */
    private record Measured(String name, Call[] calls) {
    }

    /**
     * Create then delete one volume through the driver, and the same commands run directly, in
     * either order. Driver first: its commands, read from its log, are replayed after its delete.
     * Replay first: the previous call's commands with that call's LV name and name tag replaced by
     * this one's are run (create, then delete), then the driver's create and delete, which must
     * have run exactly those commands. Alternating the order cancels what running second gains or
     * loses (warm metadata, a health check due).
     */
    private static Measured measure(CsiClient client, LogTail tail, String name, Map<String, String> parameters,
                                    Optional<Measured> previous) throws IOException {
        Optional<List<List<Logged>>> predicted = previous.map(p -> List.of(
                renamed(p.calls()[0].commands(), p.name(), name), renamed(p.calls()[1].commands(), p.name(), name)));
        long[][] early = predicted.map(p -> new long[][] {replay(p.get(0)), replay(p.get(1))}).orElse(null);
        Csi.CreateVolumeRequest create = Csi2.create(name, SIZE, parameters).build();
        ControllerGrpc.ControllerBlockingStub controller = client.controller();
        tail.skipToEnd();
        long t0 = System.nanoTime();
        Csi.Volume volume = controller.createVolume(create).getVolume();
        long t1 = System.nanoTime();
        List<Logged> createCommands = tail.commands();
        Csi.DeleteVolumeRequest delete = Csi.DeleteVolumeRequest.newBuilder().setVolumeId(volume.getVolumeId()).build();
        controller = client.controller();
        long t2 = System.nanoTime();
        controller.deleteVolume(delete);
        long t3 = System.nanoTime();
        List<Logged> deleteCommands = tail.commands();
        if (predicted.isPresent()) {
            assertEquals(argvs(predicted.get().get(0)), argvs(createCommands), "the replayed create ran what the driver ran");
            assertEquals(argvs(predicted.get().get(1)), argvs(deleteCommands), "the replayed delete ran what the driver ran");
            return new Measured(name, new Call[] {
                new Call(t1 - t0, createCommands, early[0]),
                new Call(t3 - t2, deleteCommands, early[1])
            });
        }
        // the LV is gone again, as it was before the driver's create: replay both in the same state
        return new Measured(name, new Call[] {
            new Call(t1 - t0, createCommands, replay(createCommands)),
            new Call(t3 - t2, deleteCommands, replay(deleteCommands))
        });
    }

    private static List<List<String>> argvs(List<Logged> commands) {
        return commands.stream().map(Logged::argv).toList();
    }

    /** The commands another CSI name's volume would run: its LV name and its name tag swapped in. */
    private static List<Logged> renamed(List<Logged> commands, String from, String to) {
        String lvFrom = LvmNames.volumeLvName(from);
        String lvTo = LvmNames.volumeLvName(to);
        String tagFrom = VolumeTags.NAME + "=" + VolumeTags.encodeName(from);
        String tagTo = VolumeTags.NAME + "=" + VolumeTags.encodeName(to);
        return commands.stream().map(c -> new Logged(c.argv().stream()
                .map(arg -> arg.equals(tagFrom) ? tagTo : arg.replace(lvFrom, lvTo)).toList(),
                c.exitCode(), c.driverMillis())).toList();
    }

    private static long[] replay(List<Logged> commands) {
        long[] nanos = new long[commands.size()];
        for (int i = 0; i < commands.size(); i++) {
            Logged command = commands.get(i);
            long t0 = System.nanoTime();
            GuestCommand.Result result = GuestCommand.run(COMMAND_TIMEOUT, command.argv());
            nanos[i] = System.nanoTime() - t0;
            assertEquals(command.exitCode(), result.exitCode(),
                    "the replay ends as the driver's run did (exit " + command.exitCode() + "): " + result);
        }
        return nanos;
    }

    /** The cost of fork/exec alone from a JVM in the guest: /bin/true. */
    private static double[] spawnFloor() {
        long[] nanos = new long[CALLS];
        for (int i = 0; i < CALLS; i++) {
            long t0 = System.nanoTime();
            GuestCommand.run(COMMAND_TIMEOUT, List.of("/bin/true")).requireSuccess();
            nanos[i] = System.nanoTime() - t0;
        }
        return BenchReport.millis(nanos);
    }

    /** One call of a concurrent wave: the volume id it answered with, or the status it failed with. */
    private record Outcome(long nanos, Optional<String> volumeId, Optional<String> failure) {
    }

    /** A wave of concurrent calls: wall time from release to the last answer, and each call's outcome. */
    private record Concurrent(long wallNanos, List<Outcome> outcomes) {
        double[] okMillis() {
            return outcomes.stream().filter(o -> o.failure().isEmpty()).mapToDouble(o -> o.nanos() / 1e6).toArray();
        }

        List<String> failures() {
            return outcomes.stream().flatMap(o -> o.failure().stream()).toList();
        }
    }

    private static Csi.CreateVolumeRequest concurrentRequest(int index) {
        return Csi2.create("bench-concurrent-" + index, SIZE, Map.of("lvmType", "thin")).build();
    }

    private static ControllerGrpc.ControllerBlockingStub patient(CsiClient client) {
        return client.controller().withDeadlineAfter(15, TimeUnit.MINUTES);
    }

    private static Concurrent concurrentCreates(CsiClient client) throws Exception {
        return concurrently(i -> patient(client).createVolume(concurrentRequest(i)).getVolume().getVolumeId());
    }

    private static Concurrent concurrentDeletes(CsiClient client, List<String> ids) throws Exception {
        return concurrently(i -> {
            patient(client).deleteVolume(Csi.DeleteVolumeRequest.newBuilder().setVolumeId(ids.get(i)).build());
            return ids.get(i);
        });
    }

    /**
     * The volume ids of a create wave, calls that failed retried one at a time (as the
     * external-provisioner retries), so that the delete wave has all of them to delete.
     */
    private static List<String> completeCreates(CsiClient client, Concurrent creates) {
        List<String> ids = new ArrayList<>();
        for (int i = 0; i < CONCURRENT; i++) {
            int index = i;
            ids.add(creates.outcomes().get(i).volumeId().orElseGet(() ->
                    patient(client).createVolume(concurrentRequest(index)).getVolume().getVolumeId()));
        }
        return ids;
    }

    private static void completeDeletes(CsiClient client, Concurrent deletes, List<String> ids) {
        for (int i = 0; i < CONCURRENT; i++) {
            if (deletes.outcomes().get(i).failure().isPresent()) {
                patient(client).deleteVolume(Csi.DeleteVolumeRequest.newBuilder().setVolumeId(ids.get(i)).build());
            }
        }
    }

    private interface IndexedCall {
        String call(int index);
    }

    /** CONCURRENT calls from as many threads, all released at once; wall time from release to the last answer. */
    private static Concurrent concurrently(IndexedCall call) throws Exception {
        ExecutorService pool = Executors.newFixedThreadPool(CONCURRENT);
        try {
            CountDownLatch ready = new CountDownLatch(CONCURRENT);
            CountDownLatch go = new CountDownLatch(1);
            long[] ended = new long[CONCURRENT];
            List<Future<Outcome>> futures = new ArrayList<>();
            for (int i = 0; i < CONCURRENT; i++) {
                int index = i;
                futures.add(pool.submit(() -> {
                    ready.countDown();
                    go.await();
                    long started = System.nanoTime();
                    try {
                        String id = call.call(index);
                        ended[index] = System.nanoTime();
                        return new Outcome(ended[index] - started, Optional.of(id), Optional.empty());
                    } catch (StatusRuntimeException e) {
                        ended[index] = System.nanoTime();
                        return new Outcome(ended[index] - started, Optional.empty(),
                                Optional.of(e.getStatus().getCode() + ": " + e.getStatus().getDescription()));
                    }
                }));
            }
            ready.await();
            long release = System.nanoTime();
            go.countDown();
            List<Outcome> outcomes = new ArrayList<>();
            for (Future<Outcome> future : futures) {
                outcomes.add(future.get(20, TimeUnit.MINUTES));
            }
            long last = Arrays.stream(ended).max().orElseThrow();
            return new Concurrent(last - release, outcomes);
        } finally {
            pool.shutdownNow();
        }
    }

    /** Reads the driver's log from where it was last read, keeping a half-written last line for later. */
    private static final class LogTail {
        private final Path file;
        private long offset;
        private String partial = "";

        LogTail(Path file) {
            this.file = file;
        }

        void skipToEnd() throws IOException {
            read();
        }

        /** The commands RPC threads logged since the last read. */
        List<Logged> commands() throws IOException {
            List<Logged> found = new ArrayList<>();
            for (String line : read()) {
                Matcher m = COMMAND_LINE.matcher(line);
                if (m.find() && !BACKGROUND_THREADS.contains(m.group(1))) {
                    found.add(new Logged(List.of(m.group(2).split(" ")), Integer.parseInt(m.group(3)),
                            Long.parseLong(m.group(4))));
                }
            }
            return found;
        }

        private List<String> read() throws IOException {
            try (RandomAccessFile in = new RandomAccessFile(file.toFile(), "r")) {
                long length = in.length();
                byte[] bytes = new byte[(int) (length - offset)];
                in.seek(offset);
                in.readFully(bytes);
                offset = length;
                String text = partial + new String(bytes, StandardCharsets.UTF_8);
                int lastNewline = text.lastIndexOf('\n');
                partial = text.substring(lastNewline + 1);
                return lastNewline < 0 ? List.of() : text.substring(0, lastNewline).lines().toList();
            }
        }
    }

    // --- the report ---

    private static String report(List<Call[]> thin, List<Call[]> linear, double[] spawn, Concurrent creates,
                                 Concurrent deletes) {
        StringBuilder md = new StringBuilder("## CreateVolume and DeleteVolume against their lvm commands (issue 3)\n\n")
                .append("User-mode-Linux guest (kernel " + System.getProperty("os.version") + ", 1 CPU): a 4 GiB disk, VG `lvmqos`, zeroing thin pool ")
                .append("`thinpool` of 2 GiB. ").append(CALLS).append(" calls of each kind after ").append(WARMUP)
                .append(" warm-up calls, 8 MiB volumes, thin and linear alternated. The commands the driver ran for ")
                .append("each call (argv, exit code and duration from its own debug log: `CommandRunner` at debug, ")
                .append("one line per command) are run again by fork/exec from the measuring JVM, in the same state: ")
                .append("on even calls after the driver (driver create, driver delete, replayed create, replayed ")
                .append("delete), on odd calls before it (the previous call's commands with the LV name and name ")
                .append("tag swapped, checked afterwards to be exactly what the driver then ran). Driver latency is ")
                .append("client-side over the unix socket; the driver runs with deploy/jvm.options plus the two ")
                .append("logging properties.\n\n");
        section(md, "thin CreateVolume", thin, 0);
        section(md, "thin DeleteVolume", thin, 1);
        section(md, "linear CreateVolume", linear, 0);
        section(md, "linear DeleteVolume", linear, 1);
        md.append("### Fork/exec floor\n\n`/bin/true` by fork/exec from the measuring JVM: p50 ")
                .append(ms(percentile(spawn, 50))).append(" ms, p99 ").append(ms(percentile(spawn, 99)))
                .append(" ms (").append(CALLS).append(" runs): what every command costs before lvm does anything.\n\n");
        double thinCreateP50 = percentile(driver(thin, 0), 50);
        double thinDeleteP50 = percentile(driver(thin, 1), 50);
        md.append("### ").append(CONCURRENT).append(" concurrent thin volumes\n\n")
                .append(CONCURRENT).append(" distinct names, 8 MiB thin, issued at once from ").append(CONCURRENT)
                .append(" threads over one channel with a 15-minute deadline; wall time from release to the last ")
                .append("answer, successful or not. Calls that failed were retried one at a time afterwards (not ")
                .append("timed), as the external-provisioner would, so that the delete wave had all ")
                .append(CONCURRENT).append(" volumes.\n\n")
                .append("| what | wall (ms) | succeeded | failed | per successful call p50 (ms) | max (ms) | ")
                .append(CONCURRENT).append(" × the sequential p50 (ms) |\n|---|---|---|---|---|---|---|\n")
                .append(waveRow("CreateVolume", creates, thinCreateP50))
                .append(waveRow("DeleteVolume", deletes, thinDeleteP50));
        for (Concurrent wave : List.of(creates, deletes)) {
            // the same failure for different volumes is one line: the LV name is replaced
            wave.failures().stream().collect(Collectors.groupingBy(f -> f.replaceAll("vol_[a-z0-9_]+", "vol_<name>"),
                    java.util.LinkedHashMap::new,
                    Collectors.counting())).forEach((failure, count) -> md.append("\n- ").append(count)
                    .append(" × `").append(failure).append("`"));
        }
        md.append("\n");
        md.append("\nIn-driver command times are whole milliseconds, truncated by the log (each can read up to ")
                .append("1 ms short), so the \"in-driver\" overhead leans high by at most 1 ms per command.\n");
        return md.toString();
    }

    private static String waveRow(String method, Concurrent wave, double sequentialP50) {
        double[] ok = wave.okMillis();
        return "| " + CONCURRENT + " × " + method + " | " + ms(wave.wallNanos() / 1e6) + " | " + ok.length + " | "
                + wave.failures().size() + " | " + (ok.length == 0 ? "-" : ms(percentile(ok, 50))) + " | "
                + (ok.length == 0 ? "-" : ms(percentile(ok, 100))) + " | " + ms(CONCURRENT * sequentialP50) + " |\n";
    }

    private static double[] driver(List<Call[]> calls, int which) {
        return calls.stream().mapToDouble(c -> c[which].driverNanos() / 1e6).toArray();
    }

    private static void section(StringBuilder md, String title, List<Call[]> all, int which) {
        List<Call> calls = all.stream().map(c -> c[which]).toList();
        List<String> shape = calls.getFirst().shape();
        for (Call call : calls) {
            assertEquals(shape, call.shape(), title + ": every call runs the same commands");
        }
        double[] driver = calls.stream().mapToDouble(c -> c.driverNanos() / 1e6).toArray();
        double[] direct = calls.stream().mapToDouble(c -> c.directSum() / 1e6).toArray();
        double[] logged = calls.stream().mapToDouble(Call::loggedSum).toArray();
        double[] perCall = calls.stream().mapToDouble(c -> (c.driverNanos() - c.directSum()) / (double) c.driverNanos())
                .toArray();
        md.append("### ").append(title).append("\n\n")
                .append("| what | p50 (ms) | p99 (ms) | mean (ms) |\n|---|---|---|---|\n")
                .append(row("**" + title + " through the driver**", driver))
                .append(row("its " + shape.size() + " commands run directly, summed per call", direct))
                .append(row("the same commands as timed inside the driver, summed", logged))
                .append(row("driver latency − its commands' in-driver time, per call (gRPC, Java, spawning)",
                        calls.stream().mapToDouble(c -> c.driverNanos() / 1e6 - c.loggedSum()).toArray()));
        for (int i = 0; i < shape.size(); i++) {
            int index = i;
            md.append(row("  " + (i + 1) + ". `" + shape.get(i) + "` direct",
                    calls.stream().mapToDouble(c -> c.directNanos()[index] / 1e6).toArray()));
            md.append(row("  " + (i + 1) + ". `" + shape.get(i) + "` inside the driver",
                    calls.stream().mapToDouble(c -> c.commands().get(index).driverMillis()).toArray()));
        }
        double driverP50 = percentile(driver, 50);
        md.append("\n**Overhead (driver − direct commands) / driver: ")
                .append(percent((driverP50 - percentile(direct, 50)) / driverP50)).append(" on p50s**, ")
                .append(percent((mean(driver) - mean(direct)) / mean(driver))).append(" on means, median per call ")
                .append(percent(percentile(perCall, 50))).append(" (target under 5 %). ")
                .append("Overhead beside the driver's own command times (gRPC, Java, process handling): ")
                .append(percent((driverP50 - percentile(logged, 50)) / driverP50)).append(" on p50s.\n\n")
                .append("Commands (from call 1; the LV name, tags and sizes are that call's):\n\n```\n")
                .append(calls.getFirst().commands().stream().map(c -> String.join(" ", c.argv()) + "   # exit "
                        + c.exitCode()).collect(Collectors.joining("\n")))
                .append("\n```\n\n");
    }

    private static String row(String label, double[] values) {
        return "| " + label + " | " + ms(percentile(values, 50)) + " | " + ms(percentile(values, 99)) + " | "
                + ms(mean(values)) + " |\n";
    }

    private static String percent(double fraction) {
        return String.format("%.1f %%", 100 * fraction);
    }
}
