package io.lvmqos.e2e.guest;

import static io.lvmqos.e2e.guest.Csi2.MIB;
import static io.lvmqos.e2e.uml.GuestCommand.ok;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import csi.v1.Csi;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.lvmqos.e2e.CsiClient;
import io.lvmqos.e2e.DriverProcess;
import io.lvmqos.e2e.bench.BenchReport;
import io.lvmqos.e2e.uml.GuestEnv;
import io.lvmqos.volume.Quantity;
import java.io.IOException;
import java.math.BigDecimal;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.TreeMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.function.IntFunction;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.yaml.snakeyaml.LoaderOptions;
import org.yaml.snakeyaml.Yaml;
import org.yaml.snakeyaml.constructor.SafeConstructor;

/**
 * Issue 13, bounded under a burst: the driver in a cgroup of its own whose memory.max is the
 * DaemonSet's memory limit, with the shipped JVM flags, takes {@code LVMQOS_BURST_CALLS} thin
 * CreateVolume calls at once, then as many DeleteVolume calls at once. The client retries a call
 * that answers ABORTED or UNAVAILABLE, with backoff, as the external-provisioner does. Every call
 * must succeed, the cgroup must see no OOM kill, and no LV may be left. With
 * {@code LVMQOS_BURST_IN_A_ROW=true} the same number of creates and deletes then run one after
 * another, for the wall time to compare. Writes {@value #REPORT}.md; it asserts no time.
 */
public class BurstCheck {

    @RegisterExtension
    static final DriverForTheClass driverPerTest = new DriverForTheClass().behind(BurstCheck::intoBurstCgroup)
            .startedByEachTest();

    public static final String REPORT = "burst";
    public static final String CALLS_ENV = "LVMQOS_BURST_CALLS";
    public static final String IN_A_ROW_ENV = "LVMQOS_BURST_IN_A_ROW";

    /** What one attempt may take; the provisioner's own is --timeout=10m. */
    private static final Duration ATTEMPT_DEADLINE = Duration.ofMinutes(2);
    /** When a call that keeps answering ABORTED is given up. */
    private static final Duration CALL_GIVE_UP = Duration.ofMinutes(20);
    private static final long SIZE = 8 * MIB;

    @BeforeAll
    static void onlyInTheGuest() {
        GuestEnv.assumeInGuest();
    }

    /** One wave of calls: its wall time, and how many attempts answered which retryable code. */
    private record Wave(String what, int calls, long wallNanos, Map<Status.Code, Long> retried) {
        String row() {
            return "| " + what + " | " + calls + " | " + Math.round(wallNanos / 1e6) + " | "
                    + (retried.isEmpty() ? "none" : retried.toString()) + " |";
        }
    }

    private static Path burstCgroup() {
        return GuestEnv.cgroupRoot().resolve("lvmqos-burst");
    }

    /** The driver and every lvm it starts are charged to the cgroup from the JVM's first page on. */
    private static List<String> intoBurstCgroup() {
        return List.of("/bin/sh", "-c", "echo $$ > " + burstCgroup().resolve("cgroup.procs") + " && exec \"$@\"", "sh");
    }

    @Test
    void aBurstOfThinCreatesAndDeletesAllSucceedWithinTheDaemonSetsMemoryLimit() throws Exception {
        int calls = Integer.parseInt(System.getenv().getOrDefault(CALLS_ENV, "30"));
        boolean inARow = Boolean.parseBoolean(System.getenv().getOrDefault(IN_A_ROW_ENV, "false"));
        long memoryMax = daemonSetMemoryLimit();
        Path cgroup = burstCgroup();
        Files.createDirectories(cgroup);
        Files.writeString(cgroup.resolve("memory.max"), Long.toString(memoryMax));
        List<Wave> waves = new ArrayList<>();
        long idle;
        try (GuestDriver driver = driverPerTest.start()) {
            awaitReady(driver.client());
            idle = Long.parseLong(Files.readString(cgroup.resolve("memory.current")).strip());
            String[] ids = new String[calls];
            waves.add(concurrently("thin CreateVolume, all at once", calls,
                    i -> () -> ids[i] = driver.client().controller().withDeadlineAfter(ATTEMPT_DEADLINE.toSeconds(),
                            TimeUnit.SECONDS).createVolume(request("burst-" + i)).getVolume().getVolumeId()));
            waves.add(concurrently("DeleteVolume, all at once", calls, i -> () -> delete(driver.client(), ids[i])));
            if (inARow) {
                waves.add(inARow("thin CreateVolume, one after another", calls,
                        i -> () -> ids[i] = driver.client().controller().createVolume(request("row-" + i))
                                .getVolume().getVolumeId()));
                waves.add(inARow("DeleteVolume, one after another", calls, i -> () -> delete(driver.client(), ids[i])));
            }
            assertTrue(driver.process().process().isAlive(), "the driver died during the burst:\n" + driver.log());
        }
        long oomKills = memoryEvent(cgroup, "oom_kill");
        long maxEvents = memoryEvent(cgroup, "max");
        Optional<Long> peak = Files.exists(cgroup.resolve("memory.peak"))
                ? Optional.of(Long.parseLong(Files.readString(cgroup.resolve("memory.peak")).strip()))
                : Optional.empty();
        List<String> left = ok("lvm", "lvs", "--noheadings", "-o", "lv_name", GuestEnv.volumeGroup()).lines()
                .map(String::strip).filter(name -> name.startsWith("vol_burst") || name.startsWith("vol_row"))
                .toList();

        StringBuilder md = new StringBuilder();
        md.append("| wave | calls | wall (ms) | attempts answered with a retryable code |\n| --- | --- | --- | --- |\n");
        waves.forEach(w -> md.append(w.row()).append('\n'));
        md.append("\nDriver cgroup: memory.max ").append(memoryMax / MIB).append(" MiB (the DaemonSet's limit), ")
                .append("memory.current when idle before the burst ").append(idle / MIB).append(" MiB, memory.peak ")
                .append(peak.map(p -> String.format("%.1f MiB", p / (double) MIB)).orElse("(not in this kernel)"))
                .append(", memory.events oom_kill ").append(oomKills).append(", max ").append(maxEvents)
                .append(". LVs left: ").append(left.size()).append(". Load average in the guest after: ")
                .append(BenchReport.loadAverage()).append(".\n");
        BenchReport.writeTo(GuestEnv.outDir(), REPORT, md.toString());
        System.out.println(md);
        Files.delete(cgroup);

        assertEquals(0, oomKills, "OOM kills in the driver's cgroup:\n" + md);
        assertEquals(List.of(), left, "LVs left behind");
    }

    private static Csi.CreateVolumeRequest request(String name) {
        return Csi2.create(name, SIZE, Map.of("lvmType", "thin")).build();
    }

    private static void delete(CsiClient client, String volumeId) {
        client.controller().withDeadlineAfter(ATTEMPT_DEADLINE.toSeconds(), TimeUnit.SECONDS)
                .deleteVolume(Csi.DeleteVolumeRequest.newBuilder().setVolumeId(volumeId).build());
    }

    /** All calls from threads of their own, released together; each retried as the provisioner would. */
    private static Wave concurrently(String what, int calls, IntFunction<Runnable> call) throws Exception {
        Map<Status.Code, Long> retried = new ConcurrentHashMap<>();
        ExecutorService threads = Executors.newFixedThreadPool(calls);
        try {
            java.util.concurrent.CountDownLatch go = new java.util.concurrent.CountDownLatch(1);
            List<Future<?>> done = new ArrayList<>();
            for (int i = 0; i < calls; i++) {
                Runnable one = call.apply(i);
                done.add(threads.submit(() -> {
                    go.await();
                    withRetries(one, retried);
                    return null;
                }));
            }
            long started = System.nanoTime();
            go.countDown();
            for (Future<?> f : done) {
                f.get();
            }
            return new Wave(what, calls, System.nanoTime() - started, new TreeMap<>(retried));
        } finally {
            threads.shutdownNow();
        }
    }

    private static Wave inARow(String what, int calls, IntFunction<Runnable> call) {
        Map<Status.Code, Long> retried = new ConcurrentHashMap<>();
        long started = System.nanoTime();
        for (int i = 0; i < calls; i++) {
            withRetries(call.apply(i), retried);
        }
        return new Wave(what, calls, System.nanoTime() - started, new TreeMap<>(retried));
    }

    /** ABORTED and UNAVAILABLE are retried with exponential backoff (100 ms doubling to 5 s); anything else fails. */
    private static void withRetries(Runnable call, Map<Status.Code, Long> retried) {
        long giveUp = System.nanoTime() + CALL_GIVE_UP.toNanos();
        long backoffMillis = 100;
        while (true) {
            try {
                call.run();
                return;
            } catch (StatusRuntimeException e) {
                Status.Code code = e.getStatus().getCode();
                if ((code != Status.Code.ABORTED && code != Status.Code.UNAVAILABLE) || System.nanoTime() > giveUp) {
                    throw e;
                }
                retried.merge(code, 1L, Long::sum);
            }
            try {
                Thread.sleep(backoffMillis);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IllegalStateException(e);
            }
            backoffMillis = Math.min(5000, backoffMillis * 2);
        }
    }

    private static void awaitReady(CsiClient client) throws InterruptedException {
        for (int i = 0; i < 600; i++) {
            if (client.identity().probe(Csi.ProbeRequest.getDefaultInstance()).getReady().getValue()) {
                return;
            }
            Thread.sleep(200);
        }
        throw new AssertionError("the driver did not become ready");
    }

    private static long memoryEvent(Path cgroup, String name) throws IOException {
        return Files.readAllLines(cgroup.resolve("memory.events")).stream().map(l -> l.split(" "))
                .filter(f -> f[0].equals(name)).mapToLong(f -> Long.parseLong(f[1])).sum();
    }

    /** The lvmqos container's memory limit in deploy/kubernetes/daemonset.yaml, in bytes. */
    @SuppressWarnings("unchecked")
    static long daemonSetMemoryLimit() throws IOException {
        Path daemonSet = DriverProcess.jar().getParent().getParent().getParent()
                .resolve("deploy/kubernetes/daemonset.yaml");
        Map<String, Object> doc = new Yaml(new SafeConstructor(new LoaderOptions())).load(Files.readString(daemonSet));
        Map<String, Object> podSpec = (Map<String, Object>) ((Map<String, Object>) ((Map<String, Object>) doc
                .get("spec")).get("template")).get("spec");
        for (Object c : (List<Object>) podSpec.get("containers")) {
            Map<String, Object> container = (Map<String, Object>) c;
            if ("lvmqos".equals(container.get("name"))) {
                String limit = String.valueOf(((Map<String, Object>) ((Map<String, Object>) container.get("resources"))
                        .get("limits")).get("memory"));
                BigDecimal bytes = Quantity.parse(limit).orElseThrow(() -> new AssertionError("memory limit " + limit));
                return bytes.longValueExact();
            }
        }
        throw new AssertionError("no lvmqos container in " + daemonSet);
    }
}
