package io.lvmqos.e2e.deploy;

import java.io.IOException;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

/**
 * The lvmqos container as the base DaemonSet and the image run it, for checks outside this package
 * that start the real driver the deployed way (read through {@link NodePod}, as the deploy tree's
 * own tests read it).
 *
 * @param args what kubelet passes to the image's entrypoint, {@code $(VAR)} filled in
 * @param environment what the image's ENV gives the JVM beyond its paths (glibc's tunables)
 */
public record DeployedPlugin(List<String> args, Map<String, String> environment) {

    private static final Pattern MALLOC_ARENA_MAX = Pattern.compile("(?:^|\\s)MALLOC_ARENA_MAX=([0-9]+)");

    public DeployedPlugin {
        args = List.copyOf(args);
        environment = Map.copyOf(environment);
    }

    /** The plugin's args with each {@code $(VAR)} kubelet would fill taken from {@code values}. */
    public static DeployedPlugin withEnvironment(Map<String, String> values) throws IOException {
        NodePod pod = NodePod.fromBase();
        List<String> args = NodePod.args(pod.plugin()).stream().map(arg -> expand(arg, values)).toList();
        String env = String.join(" ", DockerfileText.read(DeployTree.dockerfile()).last().all("ENV").stream()
                .map(DockerfileText.Instruction::arguments).toList());
        Matcher arenas = MALLOC_ARENA_MAX.matcher(env);
        return new DeployedPlugin(args, arenas.find() ? Map.of("MALLOC_ARENA_MAX", arenas.group(1)) : Map.of());
    }

    private static String expand(String arg, Map<String, String> values) {
        String expanded = arg;
        for (Map.Entry<String, String> value : values.entrySet()) {
            expanded = expanded.replace("$(" + value.getKey() + ")", value.getValue());
        }
        if (expanded.contains("$(")) {
            throw new AssertionError(arg + " refers to a variable not given: " + values.keySet());
        }
        return expanded;
    }

    /** The args with the named flags' values replaced ({@code --name=value} form) or dropped (null). */
    public List<String> replacing(Map<String, String> flags) {
        for (String name : flags.keySet()) {
            if (args.stream().noneMatch(arg -> arg.equals(name) || arg.startsWith(name + "="))) {
                throw new AssertionError("the DaemonSet no longer gives the plugin " + name + ": " + args);
            }
        }
        return args.stream().flatMap(arg -> {
            String name = arg.contains("=") ? arg.substring(0, arg.indexOf('=')) : arg;
            if (!flags.containsKey(name)) {
                return Stream.of(arg);
            }
            String value = flags.get(name);
            return value == null ? Stream.<String>empty() : Stream.of(name + "=" + value);
        }).toList();
    }
}
