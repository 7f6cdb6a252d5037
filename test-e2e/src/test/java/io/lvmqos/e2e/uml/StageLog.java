package io.lvmqos.e2e.uml;

import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The stage markers the guest's init printed on the console ({@code LVMQOS-STAGE <stage> start|ok|failed:
 * <why>|exit <code>}), in order. They are searched anywhere in a line because the kernel's own messages
 * share the console.
 */
record StageLog(List<Marker> markers) {
    static final String INIT = "init";
    static final String PAYLOAD = "payload";

    private static final Pattern MARKER = Pattern.compile("LVMQOS-STAGE (\\S+) (start|ok|failed|exit):?(?: (.*))?$");
    private static final Pattern UPTIME = Pattern.compile("uptime=(\\d+(?:\\.\\d+)?)");

    record Marker(String stage, String status, String detail) {
        Optional<Duration> uptime() {
            Matcher matcher = UPTIME.matcher(detail);
            return matcher.find()
                    ? Optional.of(Duration.ofNanos(Math.round(Double.parseDouble(matcher.group(1)) * 1e9)))
                    : Optional.empty();
        }
    }

    static StageLog parse(List<String> console) {
        return new StageLog(console.stream()
                .map(MARKER::matcher)
                .filter(Matcher::find)
                .map(m -> new Marker(m.group(1), m.group(2), m.group(3) == null ? "" : m.group(3)))
                .toList());
    }

    /** The first stage that reported a failure. */
    Optional<Marker> failure() {
        return markers.stream().filter(marker -> marker.status().equals("failed")).findFirst();
    }

    Optional<Marker> find(String stage, String status) {
        return markers.stream()
                .filter(marker -> marker.stage().equals(stage) && marker.status().equals(status))
                .findFirst();
    }

    boolean reached(String stage) {
        return markers.stream().anyMatch(marker -> marker.stage().equals(stage));
    }

    /** The stage that was running when the console stopped: the last one that started. */
    Optional<String> lastStarted() {
        return markers.reversed().stream()
                .filter(marker -> marker.status().equals("start"))
                .map(Marker::stage)
                .findFirst();
    }
}
