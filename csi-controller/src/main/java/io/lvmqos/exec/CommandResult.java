package io.lvmqos.exec;

/** What a finished command left: its exit code and both output streams, complete. */
public record CommandResult(Command command, int exitCode, String stdout, String stderr) {

    public boolean succeeded() {
        return exitCode == 0;
    }

    /** The command's own words about a failure, trimmed for an error message. */
    public String diagnostic() {
        String text = stderr.isBlank() ? stdout : stderr;
        text = text.strip();
        return text.length() > 2000 ? text.substring(0, 2000) + "..." : text;
    }
}
