package io.lvmqos.server;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.lvmqos.server.CommandLineParser.Option;
import io.lvmqos.server.CommandLineParser.UsageException;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/** The parser alone: both value forms, flags, repeats, and every way a command line is refused. */
class CommandLineParserTest {

    private final CommandLineParser parser = new CommandLineParser("tool", "Does a thing.", List.of(
            Option.value("--name", "NAME", "who"),
            Option.value("--size", "N", "7", "how many"),
            Option.repeatable("--group", "G", "a group; repeat for several"),
            Option.flag("--fast", "go fast")));

    private CommandLineParser.Run run(String... args) throws UsageException {
        return assertInstanceOf(CommandLineParser.Run.class, parser.parse(args));
    }

    private String refusal(String... args) {
        return assertThrows(UsageException.class, () -> parser.parse(args)).getMessage();
    }

    @Test
    void takesAValueAfterTheNameOrAfterAnEqualsSign() throws UsageException {
        assertEquals(Optional.of("a"), run("--name", "a").value("--name"));
        assertEquals(Optional.of("a"), run("--name=a").value("--name"));
        assertEquals(Optional.of("x=y"), run("--name=x=y").value("--name"), "only the first = splits");
        assertEquals(Optional.of(""), run("--name=").value("--name"));
        assertEquals(Optional.of("-1"), run("--size", "-1").value("--size"), "a value may start with a dash");
    }

    @Test
    void absentOptionsGiveTheirDefaultOrNothing() throws UsageException {
        CommandLineParser.Run run = run();
        assertEquals(Optional.of("7"), run.value("--size"));
        assertEquals(Optional.empty(), run.value("--name"));
        assertEquals(List.of(), run.values("--group"));
        assertFalse(run.flag("--fast"));
        assertEquals(Optional.of("9"), run("--size=9").value("--size"));
    }

    @Test
    void repeatableOptionsKeepEveryValueInOrder() throws UsageException {
        assertEquals(List.of("b", "a", "c"), run("--group", "b", "--group=a", "--fast", "--group", "c")
                .values("--group"));
    }

    @Test
    void flagsTakeNoValue() throws UsageException {
        assertTrue(run("--fast").flag("--fast"));
        assertTrue(refusal("--fast=true").contains("--fast takes no value"), refusal("--fast=true"));
    }

    @Test
    void unknownOptionsAreNamedWithTheValidOnes() {
        String message = refusal("--name", "a", "--nmae", "b");
        assertTrue(message.startsWith("unknown option --nmae;"), message);
        assertTrue(message.contains("--name, --size, --group, --fast, --help and --version"), message);
        assertTrue(refusal("--nmae=b").startsWith("unknown option --nmae;"));
        assertTrue(refusal("-n").startsWith("unknown option -n;"));
        assertTrue(refusal("stray").startsWith("unexpected argument 'stray';"), refusal("stray"));
    }

    @Test
    void aMissingValueIsRefused() {
        assertEquals("--name needs a value: --name=NAME", refusal("--name"));
        assertEquals("--name needs a value: --name=NAME", refusal("--name", "--fast"));
    }

    @Test
    void aSingleValuedOptionGivenTwiceIsRefused() {
        assertEquals("--name is given more than once", refusal("--name", "a", "--name=b"));
        assertEquals("--fast is given more than once", refusal("--fast", "--fast"));
    }

    @Test
    void helpAndVersionWinOverTheRest() throws UsageException {
        assertInstanceOf(CommandLineParser.Help.class, parser.parse("--name", "a", "--help"));
        assertInstanceOf(CommandLineParser.Help.class, parser.parse("-h"));
        assertInstanceOf(CommandLineParser.Version.class, parser.parse("--version"));
        assertInstanceOf(CommandLineParser.Version.class, parser.parse("-V"));
    }

    @Test
    void helpListsEveryOptionWithItsDescriptionAndDefault() {
        String help = parser.help();
        assertTrue(help.startsWith("Usage: tool [OPTION]...\n"
                + "Does a thing.\n"), help);
        assertTrue(help.contains("  --size=N\n      how many (default: 7)\n"), help);
        assertTrue(help.contains("  --fast\n      go fast\n"), help);
        assertTrue(help.contains("  -h, --help\n"), help);
        assertTrue(help.lines().allMatch(line -> line.length() <= 100), help);
    }

    @Test
    void anOptionDefinedTwiceIsAProgrammingError() {
        assertThrows(IllegalArgumentException.class, () -> new CommandLineParser("t", "s", List.of(
                Option.flag("--a", "x"), Option.flag("--a", "y"))));
        assertThrows(IllegalArgumentException.class, () -> new CommandLineParser("t", "s", List.of(
                Option.flag("--help", "x"))));
    }
}
