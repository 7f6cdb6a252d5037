package io.lvmqos.e2e.guest;

import io.lvmqos.e2e.cri.Cri;
import java.io.IOException;
import java.io.Reader;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.yaml.snakeyaml.LoaderOptions;
import org.yaml.snakeyaml.Yaml;
import org.yaml.snakeyaml.constructor.SafeConstructor;

/**
 * The node plugin's container as deploy/kubernetes/daemonset.yaml declares it, turned into what kubelet
 * would hand the runtime: its arguments with {@code $(VAR)} expanded, and its volume mounts as CRI mounts
 * of their host paths, with the propagation kubelet maps each mountPropagation to. Read from the file
 * itself, so the runtime check runs the driver exactly as deployed.
 */
record DaemonSetPlugin(List<String> args, List<Cri.Mount> mounts, List<String> skippedMounts) {

    /** Where the repository is (the host sets it): the guest reads deploy/ from the host's files. */
    static final String REPOSITORY_VARIABLE = "LVMQOS_REPOSITORY";
    private static final Pattern VARIABLE = Pattern.compile("\\$\\(([A-Za-z_][A-Za-z0-9_]*)\\)");

    /**
     * @param env the container's environment as kubelet would resolve it (NODE_NAME)
     * @param hostPaths host paths that differ on this test node, e.g. the host's /etc/lvm
     */
    @SuppressWarnings("unchecked")
    static DaemonSetPlugin read(String container, Map<String, String> env, Map<String, String> hostPaths)
            throws IOException {
        Path file = Path.of(System.getenv(REPOSITORY_VARIABLE), "deploy/kubernetes/daemonset.yaml");
        Map<String, Object> daemonSet;
        try (Reader reader = Files.newBufferedReader(file)) {
            daemonSet = new Yaml(new SafeConstructor(new LoaderOptions())).load(reader);
        }
        Map<String, Object> podSpec = (Map<String, Object>) ((Map<String, Object>) ((Map<String, Object>)
                daemonSet.get("spec")).get("template")).get("spec");
        Map<String, Object> plugin = ((List<Map<String, Object>>) podSpec.get("containers")).stream()
                .filter(c -> container.equals(c.get("name"))).findFirst()
                .orElseThrow(() -> new AssertionError("no container " + container + " in " + file));
        List<String> args = new ArrayList<>();
        for (Object arg : (List<Object>) plugin.get("args")) {
            Matcher matcher = VARIABLE.matcher(String.valueOf(arg));
            args.add(matcher.replaceAll(m -> Matcher.quoteReplacement(env.getOrDefault(m.group(1), m.group()))));
        }
        Map<String, Map<String, Object>> volumes = new java.util.HashMap<>();
        for (Map<String, Object> volume : (List<Map<String, Object>>) podSpec.get("volumes")) {
            volumes.put((String) volume.get("name"), volume);
        }
        List<Cri.Mount> mounts = new ArrayList<>();
        List<String> skipped = new ArrayList<>();
        for (Map<String, Object> mount : (List<Map<String, Object>>) plugin.get("volumeMounts")) {
            Map<String, Object> volume = volumes.get((String) mount.get("name"));
            Map<String, Object> hostPath = (Map<String, Object>) volume.get("hostPath");
            if (hostPath == null || mount.containsKey("subPath")) {
                skipped.add((String) mount.get("name"));
                continue;
            }
            String path = ((String) hostPath.get("path")).replaceAll("/$", "");
            mounts.add(Cri.Mount.newBuilder()
                    .setContainerPath((String) mount.get("mountPath"))
                    .setHostPath(hostPaths.getOrDefault(path, path))
                    .setReadonly(Boolean.TRUE.equals(mount.get("readOnly")))
                    .setPropagation(propagation((String) mount.get("mountPropagation")))
                    .build());
        }
        return new DaemonSetPlugin(List.copyOf(args), List.copyOf(mounts), List.copyOf(skipped));
    }

    /** kubelet's mapping of a volumeMount's mountPropagation (unset is None). */
    static Cri.MountPropagation propagation(String mountPropagation) {
        if (mountPropagation == null || mountPropagation.equals("None")) {
            return Cri.MountPropagation.PROPAGATION_PRIVATE;
        }
        return switch (mountPropagation) {
            case "HostToContainer" -> Cri.MountPropagation.PROPAGATION_HOST_TO_CONTAINER;
            case "Bidirectional" -> Cri.MountPropagation.PROPAGATION_BIDIRECTIONAL;
            default -> throw new AssertionError("unknown mountPropagation " + mountPropagation);
        };
    }
}
