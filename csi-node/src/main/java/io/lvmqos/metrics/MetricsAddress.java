package io.lvmqos.metrics;

import java.net.InetSocketAddress;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The {@code --metrics-address} flag: {@code :9808} for every interface, {@code 127.0.0.1:9808},
 * {@code [::1]:9808} or {@code host:9808}. Bare IPv6 addresses are refused: without brackets the
 * last colon cannot be told from the port's.
 */
public final class MetricsAddress {

    private static final Pattern HOST_PORT = Pattern.compile("(?:\\[([0-9A-Fa-f:.%\\w]+)]|([^:\\[\\]\\s]*)):([^:]*)");
    private static final Pattern PORT = Pattern.compile("[0-9]{1,5}");

    private MetricsAddress() {
    }

    /**
     * The address to listen on.
     *
     * @throws IllegalArgumentException naming what is wrong and the expected form
     */
    public static InetSocketAddress parse(String flag) {
        if (flag == null || flag.isBlank()) {
            throw invalid(flag, "it is empty");
        }
        Matcher m = HOST_PORT.matcher(flag);
        if (!m.matches()) {
            long colons = flag.chars().filter(c -> c == ':').count();
            throw invalid(flag, colons == 0 ? "there is no ':port'"
                    : colons > 1 && !flag.startsWith("[") ? "an IPv6 address must be in brackets, e.g. [::1]:9808"
                    : "the host part is not a host name or an IP address");
        }
        int port = port(flag, m.group(3));
        String host = m.group(1) != null ? m.group(1) : m.group(2);
        if (host.isEmpty()) {
            return new InetSocketAddress(port);
        }
        InetSocketAddress address = new InetSocketAddress(host, port);
        if (address.isUnresolved()) {
            throw invalid(flag, "host '" + host + "' does not resolve to an address");
        }
        return address;
    }

    private static int port(String flag, String text) {
        if (!PORT.matcher(text).matches()) {
            throw invalid(flag, "port '" + text + "' is not a number");
        }
        int port = Integer.parseInt(text);
        if (port < 1 || port > 65535) {
            throw invalid(flag, "port " + port + " is outside 1..65535");
        }
        return port;
    }

    private static IllegalArgumentException invalid(String flag, String why) {
        return new IllegalArgumentException("'" + flag + "' is not a listen address (" + why
                + "); expected :PORT for every interface or HOST:PORT, e.g. :9808 or 127.0.0.1:9808");
    }
}
