package io.lvmqos.e2e.guest;

import static io.lvmqos.e2e.uml.GuestCommand.ok;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.lvmqos.e2e.guest.GuestPods.Pod;
import io.lvmqos.e2e.uml.GuestEnv;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import java.util.function.Function;

/**
 * The churn's invariants, each read from the OS (lvs, vgs, dmsetup, mountinfo, the cgroup files,
 * /proc) and held against {@link ChurnModel}; the driver is asked only for GetCapacity, whose
 * answer is the thing checked. Each method returns what it found wrong, empty when it holds.
 */
final class ChurnInvariants {

    private static final ObjectMapper JSON = new ObjectMapper();

    /** One LV as lvs reports it. */
    record Lv(String name, String attr, long sizeBytes, Map<String, String> tags, String pool, double dataPercent,
              String device) {
        boolean isPool() {
            return attr.startsWith("t");
        }
    }

    private final String vg;
    private final String pool;
    private long checks;

    ChurnInvariants(String vg, String pool) {
        this.vg = vg;
        this.pool = pool;
    }

    long checks() {
        return checks;
    }

    static List<Lv> lvs(String vg) {
        String out = ok("lvm", "lvs", "--reportformat", "json", "--units", "b", "--nosuffix", "-o",
                "lv_name,lv_attr,lv_size,lv_tags,pool_lv,data_percent,lv_kernel_major,lv_kernel_minor", vg);
        List<Lv> lvs = new ArrayList<>();
        try {
            for (JsonNode lv : JSON.readTree(out).path("report").get(0).path("lv")) {
                Map<String, String> tags = new TreeMap<>();
                for (String tag : lv.path("lv_tags").asText().split(",")) {
                    int eq = tag.indexOf('=');
                    if (eq > 0) {
                        tags.put(tag.substring(0, eq), tag.substring(eq + 1));
                    }
                }
                String percent = lv.path("data_percent").asText();
                lvs.add(new Lv(lv.path("lv_name").asText(), lv.path("lv_attr").asText(),
                        Long.parseLong(lv.path("lv_size").asText()), tags, lv.path("pool_lv").asText(),
                        percent.isEmpty() ? 0 : Double.parseDouble(percent),
                        lv.path("lv_kernel_major").asText() + ":" + lv.path("lv_kernel_minor").asText()));
            }
        } catch (IOException e) {
            throw new AssertionError("lvs printed no JSON: " + out, e);
        }
        return lvs;
    }

    static long vgFree(String vg) {
        String out = ok("lvm", "vgs", "--reportformat", "json", "--units", "b", "--nosuffix", "-o", "vg_free", vg);
        try {
            return Long.parseLong(JSON.readTree(out).path("report").get(0).path("vg").get(0).path("vg_free").asText());
        } catch (IOException e) {
            throw new AssertionError("vgs printed no JSON: " + out, e);
        }
    }

    /**
     * Every LV is the thin pool or a volume or snapshot of the model, and every one of those
     * exists, at the model's size, with the limits the model's parameters asked for in its tags,
     * and no deletion half done (a wipe tag).
     */
    List<String> logicalVolumes(ChurnModel model, List<Lv> lvs) {
        checks++;
        List<String> wrong = new ArrayList<>();
        Map<String, Lv> byName = new HashMap<>();
        lvs.forEach(lv -> byName.put(lv.name(), lv));
        Set<String> known = new HashSet<>();
        for (ChurnModel.Volume v : model.volumes.values()) {
            known.add(v.lvName());
            Lv lv = byName.get(v.lvName());
            if (lv == null) {
                wrong.add("volume " + v + " has no LV");
                continue;
            }
            if (lv.sizeBytes() != v.sizeBytes) {
                wrong.add("LV " + lv.name() + " is " + lv.sizeBytes() + " bytes, the volume " + v.sizeBytes);
            }
            if (!qosTags(lv).equals(v.limits)) {
                wrong.add("LV " + lv.name() + " carries limits " + qosTags(lv) + ", the volume's parameters asked for " + v.limits);
            }
            if (lv.tags().containsKey("lvmqos.wiped")) {
                wrong.add("LV " + lv.name() + " of a live volume carries a wipe tag: " + lv.tags());
            }
        }
        for (ChurnModel.Snapshot s : model.snapshots.values()) {
            known.add(s.lvName());
            if (!byName.containsKey(s.lvName())) {
                wrong.add("snapshot " + s.name() + " has no LV");
            }
        }
        for (Lv lv : lvs) {
            if (!lv.isPool() && !known.contains(lv.name())) {
                wrong.add("LV " + lv.name() + " (tags " + lv.tags() + ") is no volume or snapshot the test knows");
            }
        }
        return wrong;
    }

    static Map<String, String> qosTags(Lv lv) {
        Map<String, String> limits = new TreeMap<>();
        lv.tags().forEach((key, value) -> {
            if (key.startsWith("lvmqos.qos.")) {
                limits.put(key.substring("lvmqos.qos.".length()), value);
            }
        });
        return limits;
    }

    /** The mount points below the kubelet directory are exactly the model's staging and target paths, once each. */
    List<String> mounts(ChurnModel model) throws IOException {
        checks++;
        List<String> expected = new ArrayList<>();
        model.volumes.values().forEach(v -> {
            v.staging.ifPresent(p -> expected.add(p.toString()));
            v.target.ifPresent(p -> expected.add(p.toString()));
        });
        String kubelet = GuestDriver.KUBELET + "/";
        List<String> actual = Files.readAllLines(Path.of("/proc/self/mountinfo")).stream()
                .map(line -> line.split(" ")[4]).filter(point -> point.startsWith(kubelet)).sorted().toList();
        List<String> wrong = new ArrayList<>();
        if (!actual.equals(expected.stream().sorted().toList())) {
            List<String> extra = new ArrayList<>(actual);
            expected.forEach(extra::remove);
            List<String> missing = new ArrayList<>(expected);
            actual.forEach(missing::remove);
            wrong.add("mounts below " + kubelet + ": not asked for " + extra + ", missing " + missing);
        }
        return wrong;
    }

    /**
     * Each pod's io.max holds one line per published volume with limits, equal to what that
     * volume's LV tags say for its current size, and no other line.
     */
    List<String> podLimits(ChurnModel model, List<Pod> pods, List<Lv> lvs) throws IOException {
        checks++;
        Map<String, Lv> byName = new HashMap<>();
        lvs.forEach(lv -> byName.put(lv.name(), lv));
        List<String> wrong = new ArrayList<>();
        for (int i = 0; i < pods.size(); i++) {
            Map<String, Map<String, String>> expected = new TreeMap<>();
            for (ChurnModel.Volume v : model.volumes.values()) {
                Lv lv = byName.get(v.lvName());
                if (v.pod.equals(Optional.of(i)) && lv != null) {
                    ChurnModel.ioMaxFields(qosTags(lv), lv.sizeBytes()).ifPresent(f -> expected.put(lv.device(), f));
                }
            }
            Map<String, Map<String, String>> actual = ioMax(pods.get(i).cgroup());
            if (!actual.equals(expected)) {
                wrong.add("pod " + i + " (" + pods.get(i).cgroup() + ") io.max " + actual + ", its volumes' tags say " + expected);
            }
        }
        return wrong;
    }

    static Map<String, Map<String, String>> ioMax(Path cgroup) throws IOException {
        Path file = cgroup.resolve("io.max");
        Map<String, Map<String, String>> lines = new TreeMap<>();
        if (!Files.exists(file)) {
            return lines;
        }
        for (String line : Files.readAllLines(file)) {
            String[] fields = line.strip().split("\\s+");
            if (fields.length < 2) {
                continue;
            }
            Map<String, String> values = new TreeMap<>();
            for (int f = 1; f < fields.length; f++) {
                String[] kv = fields[f].split("=", 2);
                values.put(kv[0], kv[1]);
            }
            lines.put(fields[0], values);
        }
        return lines;
    }

    /**
     * GetCapacity for a linear and a thin volume equals what vgs and lvs say, computed as the
     * driver documents capacity (docs/architecture.md, ThinPoolRoom): linear, the group's free
     * bytes; thin (ratio 1), the smaller of the pool's size less its thin LVs' sizes and the pool's
     * unwritten data space. Read before and after the calls; a pool whose data use moved between
     * (ext4's lazy inode table initialisation writes in the background) is read again.
     */
    List<String> capacity(Function<Map<String, String>, Long> getCapacity) {
        checks++;
        String last = "";
        for (int attempt = 0; attempt < 5; attempt++) {
            long free = vgFree(vg);
            List<Lv> before = lvs(vg);
            long linear = getCapacity.apply(Map.of());
            long thin = getCapacity.apply(Map.of("lvmType", "thin"));
            List<Lv> after = lvs(vg);
            if (!before.equals(after) || free != vgFree(vg)) {
                last = "lvs changed while GetCapacity ran";
                continue;
            }
            long expectedThin = thinRoom(after);
            if (linear == free && thin == expectedThin) {
                return List.of();
            }
            last = "GetCapacity linear " + linear + " (vgs vg_free " + free + "), thin " + thin + " (lvs say "
                    + expectedThin + ")";
            if (linear == free) {
                continue; // the thin pool's data use may have moved between the lvs and the driver's own
            }
            break;
        }
        return List.of(last);
    }

    private long thinRoom(List<Lv> lvs) {
        Lv poolLv = lvs.stream().filter(lv -> lv.name().equals(pool)).findFirst()
                .orElseThrow(() -> new AssertionError("no thin pool " + pool + " in " + lvs));
        long promised = lvs.stream().filter(lv -> pool.equals(lv.pool())).mapToLong(Lv::sizeBytes).sum();
        long used = Math.min(poolLv.sizeBytes(), (long) Math.ceil(poolLv.sizeBytes() * poolLv.dataPercent() / 100));
        return Math.min(Math.max(0, poolLv.sizeBytes() - promised), Math.max(0, poolLv.sizeBytes() - used));
    }

    /**
     * No thin pool holds a metadata snapshot (the driver reserves one only while a
     * snapshot-metadata call reads it, and releases what a killed run left at its next start),
     * and no device-mapper device is left suspended.
     */
    List<String> deviceMapper() {
        checks++;
        List<String> wrong = new ArrayList<>();
        for (String line : ok("dmsetup", "status", "--target", "thin-pool").lines().toList()) {
            // name: start length thin-pool transaction meta/total data/total held-root mode ...
            String[] fields = line.strip().split("\\s+");
            if (fields.length > 7 && !fields[7].equals("-")) {
                wrong.add("thin pool holds a metadata snapshot (held root " + fields[7] + "): " + line);
            }
        }
        for (String line : ok("dmsetup", "info", "-c", "--noheadings", "-o", "name,suspended").lines().toList()) {
            if (line.contains("Suspended")) {
                wrong.add("device left suspended: " + line.strip());
            }
        }
        return wrong;
    }

    /**
     * Why a process does not end: each of its threads' state and kernel wait channel, its kernel
     * stacks where the kernel shows them, and device-mapper's devices.
     */
    static String stuck(long pid) {
        StringBuilder text = new StringBuilder();
        try (var tasks = Files.list(Path.of("/proc/" + pid + "/task"))) {
            for (Path task : tasks.toList()) {
                String stat = Files.readString(task.resolve("stat"));
                String state = stat.substring(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3);
                if (!state.equals("S")) {
                    text.append("\n  thread ").append(task.getFileName()).append(' ')
                            .append(stat, stat.indexOf('('), stat.lastIndexOf(')') + 1).append(" state ").append(state)
                            .append(" wchan ").append(Files.readString(task.resolve("wchan")));
                    try {
                        text.append("\n    ").append(Files.readString(task.resolve("stack")).replace("\n", "\n    "));
                    } catch (IOException noStack) {
                        // a kernel without CONFIG_STACKTRACE
                    }
                }
            }
        } catch (IOException e) {
            text.append(" (/proc/").append(pid).append(" unreadable: ").append(e).append(')');
        }
        text.append("\n  dmsetup info: ").append(io.lvmqos.e2e.uml.GuestCommand.run("dmsetup", "info", "-c").stdout());
        return text.toString();
    }

    /** The driver process's VmRSS in bytes. */
    static long rss(long pid) throws IOException {
        for (String line : Files.readAllLines(Path.of("/proc/" + pid + "/status"))) {
            if (line.startsWith("VmRSS:")) {
                return Long.parseLong(line.substring(6).strip().split("\\s+")[0]) * 1024;
            }
        }
        throw new AssertionError("no VmRSS for process " + pid);
    }

    static String volumeGroup() {
        return GuestEnv.volumeGroup();
    }
}
