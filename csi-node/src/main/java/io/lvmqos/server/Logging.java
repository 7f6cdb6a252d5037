package io.lvmqos.server;

import java.util.List;
import java.util.Locale;

/**
 * The process's log levels, set from the command line before the first logger exists.
 *
 * <p>{@code --log-level} sets the driver's own loggers only. gRPC's and Netty's stay at info (or
 * quieter) whatever it is, because at debug Netty's HTTP/2 frame logger ({@code NettyServerHandler})
 * writes every inbound DATA frame in hex, and those frames hold the {@code secrets} of CreateVolume,
 * NodeStageVolume and the other calls that carry them. A level given to any library logger as a JVM
 * flag ({@code -Dorg.slf4j.simpleLogger.log.io.netty=debug}, or a raised
 * {@code defaultLogLevel}) is overridden for the same reason. Only {@code --log-wire} lets the
 * transport's debug output through, with a warning at start.
 */
final class Logging {

    /** The driver's log levels, most severe first. */
    enum Level {
        ERROR, WARN, INFO, DEBUG, TRACE;

        /** {@code error|warn|info|debug|trace}, in any case, as {@code --log-level} takes it. */
        static Level parse(String value) {
            try {
                return valueOf(value.strip().toUpperCase(Locale.ROOT));
            } catch (IllegalArgumentException e) {
                throw new IllegalArgumentException("'" + value + "' is not a log level: expected error, warn, info,"
                        + " debug or trace", e);
            }
        }

        String simpleLoggerName() {
            return name().toLowerCase(Locale.ROOT);
        }

        Level quieterOf(Level other) {
            return compareTo(other) <= 0 ? this : other;
        }

        Level louderOf(Level other) {
            return compareTo(other) >= 0 ? this : other;
        }
    }

    static final String PREFIX = "org.slf4j.simpleLogger.";
    /** The driver's own loggers: its classes, and the one-line-per-RPC log. */
    static final List<String> OWN_LOGGERS = List.of("io.lvmqos", "rpc");
    /** The transport's loggers, whose debug output includes request bytes. */
    static final List<String> WIRE_LOGGERS = List.of("io.netty", "io.grpc");

    // JUL holds its loggers weakly: a level set on a logger nobody references would be forgotten
    private static final java.util.List<java.util.logging.Logger> PINNED_JUL_LOGGERS = new java.util.ArrayList<>();

    private Logging() {
    }

    /** Sets the levels; must run before the first SLF4J logger is made, since SimpleLogger reads them then. */
    static void configure(Level level, boolean wire) {
        for (String property : System.getProperties().stringPropertyNames()) {
            if (property.startsWith(PREFIX + "log.") && !isOwn(property.substring((PREFIX + "log.").length()))) {
                System.clearProperty(property);
            }
        }
        // every other library: info at most, quieter when the driver itself is quieter
        Level libraries = level.quieterOf(Level.INFO);
        System.setProperty(PREFIX + "defaultLogLevel", libraries.simpleLoggerName());
        for (String own : OWN_LOGGERS) {
            System.setProperty(PREFIX + "log." + own, level.simpleLoggerName());
        }
        Level transport = wire ? level.louderOf(Level.DEBUG) : libraries;
        for (String logger : WIRE_LOGGERS) {
            System.setProperty(PREFIX + "log." + logger, transport.simpleLoggerName());
            if (!wire) {
                // gRPC also logs through java.util.logging, which a JVM flag could configure
                java.util.logging.Logger jul = java.util.logging.Logger.getLogger(logger);
                jul.setLevel(java.util.logging.Level.INFO);
                PINNED_JUL_LOGGERS.add(jul);
            }
        }
    }

    /** The warning {@code --log-wire} prints at start, on standard error and in the log. */
    static String wireWarning() {
        return "--log-wire is on: gRPC's and Netty's debug output is logged, including every request in hex,"
                + " and with it the secrets of CreateVolume, NodeStageVolume and other calls. Use it on a test node"
                + " only and delete the log afterwards";
    }

    private static boolean isOwn(String logger) {
        return OWN_LOGGERS.stream().anyMatch(own -> logger.equals(own) || logger.startsWith(own + "."));
    }
}
