package io.lvmqos.server;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.code_intelligence.jazzer.api.FuzzedDataProvider;
import com.code_intelligence.jazzer.junit.FuzzTest;
import io.lvmqos.fuzz.FuzzReport;
import io.lvmqos.server.CommandLineParser.Option;
import io.lvmqos.server.CommandLineParser.UsageException;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;

/**
 * Fuzzes {@link CommandLineParser} with the plugin's own options ({@link Main#COMMAND_LINE}), and
 * what {@link Main#settings(String...)} makes of a command line it accepts.
 *
 * <p>Property: for any arguments, {@code parse} returns help, the version or a run, or throws
 * UsageException, never another exception; a run holds only known options, at most one value for
 * an option that is not repeatable, none for a flag, and no value that is not in the arguments. A
 * command line written from known options (each value after "=" or as the next argument, flags,
 * repeats) parses to exactly those values, and asks for help when -h or --help follows it.
 * {@code Main.settings} on a run returns settings or throws IllegalArgumentException itself (no
 * subclass) wrapping the UsageException whose message the plugin would exit with (command lines
 * with --metrics-address are left out: a host name there is looked up in DNS).
 */
class CommandLineParserFuzzTest {

    private static final FuzzReport REPORT = new FuzzReport(CommandLineParserFuzzTest.class);
    private static final CommandLineParser PARSER = Main.COMMAND_LINE;
    private static final List<String> NAMES = PARSER.optionNames();
    private static final Map<String, Option> OPTIONS = options();
    private static final String[] WORDS = {"-h", "--help", "-V", "--version", "--", "-", "=", "--node-id=", "--x",
            "unix:///csi/csi.sock", "unix:relative", "node-1", "lvmqos", "vg0", "/var/lib/kubelet", "relative",
            "200Mi", "1", "0", "info", "debug", "trace", "lvmqos:iops=400,bps=200Mi", "lvmqos:ctrl=user min=100",
            "lvmqos:model=linear rbps=1", "lvmqos:enable=1", "a:", ":x", "\u0000", ""};

    @FuzzTest
    void parsesOrRefusesEveryCommandLine(FuzzedDataProvider data) {
        REPORT.count();
        if (data.consumeBoolean()) {
            wellFormedLinesParseToTheirValues(data);
            return;
        }
        List<String> args = new ArrayList<>();
        for (int n = data.consumeInt(0, 12); n > 0; n--) {
            args.add(switch (data.consumeInt(0, 3)) {
                case 0 -> data.pickValue(NAMES);
                case 1 -> data.pickValue(NAMES) + "=" + (data.consumeBoolean() ? data.pickValue(WORDS) : data.consumeString(20));
                case 2 -> data.pickValue(WORDS);
                default -> data.consumeString(20);
            });
        }
        String[] argv = args.toArray(String[]::new);
        CommandLineParser.Request request;
        try {
            request = PARSER.parse(argv);
        } catch (UsageException refused) {
            return;
        }
        if (request instanceof CommandLineParser.Run run) {
            for (Map.Entry<String, List<String>> given : run.given().entrySet()) {
                Option option = run.options().get(given.getKey());
                assertTrue(option != null, given.getKey());
                assertTrue(option.repeatable() || given.getValue().size() <= 1, () -> given + " in " + args);
                assertTrue(!option.isFlag() || given.getValue().isEmpty(), () -> given + " in " + args);
                for (String value : given.getValue()) {
                    assertTrue(args.contains(value) || args.contains(given.getKey() + "=" + value),
                            () -> value + " is not in " + args);
                }
            }
            settingsOrRefusal(run, argv);
        }
    }

    @AfterAll
    static void report() {
        REPORT.write();
    }

    private static void wellFormedLinesParseToTheirValues(FuzzedDataProvider data) {
        Map<String, List<String>> expected = new LinkedHashMap<>();
        List<String> args = new ArrayList<>();
        for (int n = data.consumeInt(0, 10); n > 0; n--) {
            String name = data.pickValue(NAMES);
            Option option = OPTIONS.get(name);
            if (expected.containsKey(name) && !option.repeatable()) {
                continue;
            }
            List<String> values = expected.computeIfAbsent(name, k -> new ArrayList<>());
            if (option.isFlag()) {
                args.add(name);
                continue;
            }
            String value = data.consumeBoolean() ? data.pickValue(WORDS) : data.consumeString(20);
            values.add(value);
            if (data.consumeBoolean() || NAMES.contains(value.split("=", 2)[0])) {
                args.add(name + "=" + value);
            } else {
                args.add(name);
                args.add(value);
            }
        }
        String help = data.pickValue(new String[] {"", "-h", "--help"});
        if (!help.isEmpty()) {
            args.add(help);
        }
        CommandLineParser.Request request;
        try {
            request = PARSER.parse(args.toArray(String[]::new));
        } catch (UsageException e) {
            throw new AssertionError(args + " was refused: " + e.getMessage(), e);
        }
        if (!help.isEmpty()) {
            assertInstanceOf(CommandLineParser.Help.class, request, args::toString);
            return;
        }
        CommandLineParser.Run run = assertInstanceOf(CommandLineParser.Run.class, request, args::toString);
        assertEquals(expected, run.given(), args::toString);
    }

    private static Map<String, Option> options() {
        try {
            return ((CommandLineParser.Run) PARSER.parse()).options();
        } catch (UsageException e) {
            throw new AssertionError(e);
        }
    }

    private static void settingsOrRefusal(CommandLineParser.Run run, String[] argv) {
        if (run.value("--metrics-address").isPresent()) {
            return;
        }
        try {
            Main.settings(argv);
        } catch (IllegalArgumentException refused) {
            // exactly the usage refusal the plugin exits 2 with; anything else would end it with a stack trace
            assertEquals(IllegalArgumentException.class, refused.getClass(), refused::toString);
            UsageException usage = assertInstanceOf(UsageException.class, refused.getCause(), refused::toString);
            assertEquals(usage.getMessage(), refused.getMessage());
            assertTrue(refused.getMessage() != null && !refused.getMessage().isBlank(), refused::toString);
        }
    }
}
