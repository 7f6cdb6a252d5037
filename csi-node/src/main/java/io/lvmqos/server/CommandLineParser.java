package io.lvmqos.server;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * A strict parser for long options, {@code --name value} or {@code --name=value}, plus {@code -h}/{@code --help}
 * and {@code -V}/{@code --version}.
 *
 * <p>It replaced picocli, whose classes are of a class-file version the AOT cache cannot hold, so they were
 * loaded and verified at every start (about 250 ms of the 580 ms to the first Probe). Anything it does not
 * know is refused rather than skipped: a typo in a DaemonSet's argument must stop the plugin, not leave a
 * default silently in force.
 */
final class CommandLineParser {

    /**
     * One option.
     *
     * @param label what the value is, shown in the help and in errors; empty for a flag, which takes no value
     * @param defaultValue the value when the option is absent, or empty when there is none or it is computed
     * @param repeatable whether it may be given several times (each adds a value)
     */
    record Option(String name, String label, String description, Optional<String> defaultValue,
                  boolean repeatable) {

        Option {
            if (!name.startsWith("--")) {
                throw new IllegalArgumentException(name + " should start with --");
            }
        }

        static Option flag(String name, String description) {
            return new Option(name, "", description, Optional.empty(), false);
        }

        static Option value(String name, String label, String description) {
            return new Option(name, label, description, Optional.empty(), false);
        }

        static Option value(String name, String label, String defaultValue, String description) {
            return new Option(name, label, description, Optional.of(defaultValue), false);
        }

        static Option repeatable(String name, String label, String description) {
            return new Option(name, label, description, Optional.empty(), true);
        }

        boolean isFlag() {
            return label.isEmpty();
        }

        String synopsis() {
            return isFlag() ? name : name + "=" + label;
        }
    }

    /** A command line that cannot be run; its message names the argument and what was expected. */
    static final class UsageException extends Exception {
        UsageException(String message) {
            super(message);
        }
    }

    /** What a parse asked for: help, the version, or a run with these values. */
    sealed interface Request permits Help, Version, Run {
    }

    record Help() implements Request {
    }

    record Version() implements Request {
    }

    /** The values given, in order, by option name; flags given map to an empty list. */
    record Run(Map<String, List<String>> given, Map<String, Option> options) implements Request {

        /** The single value given, else the option's default; empty when neither exists. */
        Optional<String> value(String name) {
            List<String> values = given.get(known(name).name());
            return values == null ? known(name).defaultValue() : Optional.of(values.getFirst());
        }

        List<String> values(String name) {
            return given.getOrDefault(known(name).name(), List.of());
        }

        boolean flag(String name) {
            return given.containsKey(known(name).name());
        }

        private Option known(String name) {
            Option option = options.get(name);
            if (option == null) {
                throw new IllegalArgumentException("no option " + name);
            }
            return option;
        }
    }

    private static final int WIDTH = 100;
    private static final String INDENT = "      ";

    private final String command;
    private final String summary;
    private final Map<String, Option> options = new LinkedHashMap<>();

    CommandLineParser(String command, String summary, List<Option> options) {
        this.command = command;
        this.summary = summary;
        for (Option option : options) {
            if (this.options.put(option.name(), option) != null || isBuiltIn(option.name())) {
                throw new IllegalArgumentException("option " + option.name() + " is defined twice");
            }
        }
    }

    /** The option names, in the order they were defined, without the built-in help and version. */
    List<String> optionNames() {
        return List.copyOf(options.keySet());
    }

    Request parse(String... args) throws UsageException {
        Map<String, List<String>> given = new LinkedHashMap<>();
        for (int i = 0; i < args.length; i++) {
            String arg = args[i];
            if (arg.equals("-h") || arg.equals("--help")) {
                return new Help();
            }
            if (arg.equals("-V") || arg.equals("--version")) {
                return new Version();
            }
            int equals = arg.indexOf('=');
            String name = equals < 0 ? arg : arg.substring(0, equals);
            Option option = options.get(name);
            if (option == null) {
                throw new UsageException((arg.startsWith("-") ? "unknown option " + name : "unexpected argument '"
                        + arg + "'") + "; the options are " + String.join(", ", optionNames()) + ", --help and"
                        + " --version");
            }
            if (given.containsKey(name) && !option.repeatable()) {
                throw new UsageException(name + " is given more than once");
            }
            List<String> values = given.computeIfAbsent(name, n -> new ArrayList<>());
            if (option.isFlag()) {
                if (equals >= 0) {
                    throw new UsageException(name + " takes no value, but was given '" + arg.substring(equals + 1)
                            + "'");
                }
            } else if (equals >= 0) {
                values.add(arg.substring(equals + 1));
            } else if (i + 1 < args.length && !options.containsKey(args[i + 1].split("=", 2)[0])) {
                values.add(args[++i]);
            } else {
                throw new UsageException(name + " needs a value: " + option.synopsis());
            }
        }
        return new Run(Map.copyOf(given), Map.copyOf(options));
    }

    /** The text {@code --help} prints: what the command does, then each option with its description. */
    String help() {
        StringBuilder text = new StringBuilder("Usage: ").append(command).append(" [OPTION]...\n");
        wrap(text, summary, "");
        text.append('\n');
        for (Option option : options.values()) {
            text.append("  ").append(option.synopsis()).append('\n');
            String description = option.description()
                    + option.defaultValue().map(value -> " (default: " + value + ")").orElse("");
            wrap(text, description, INDENT);
        }
        text.append("  -h, --help\n");
        wrap(text, "print these options and exit", INDENT);
        text.append("  -V, --version\n");
        wrap(text, "print the version and exit", INDENT);
        return text.toString();
    }

    private static void wrap(StringBuilder text, String words, String indent) {
        StringBuilder line = new StringBuilder(indent);
        for (String word : words.split(" ")) {
            if (line.length() > indent.length() && line.length() + 1 + word.length() > WIDTH) {
                text.append(line).append('\n');
                line = new StringBuilder(indent);
            }
            if (line.length() > indent.length()) {
                line.append(' ');
            }
            line.append(word);
        }
        text.append(line).append('\n');
    }

    private static boolean isBuiltIn(String name) {
        return name.equals("--help") || name.equals("--version");
    }
}
