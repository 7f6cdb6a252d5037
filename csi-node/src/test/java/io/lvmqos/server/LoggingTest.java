package io.lvmqos.server;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.util.Properties;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** The levels the command line gives SLF4J's simple logger: the driver's follow --log-level, the transport's stay at info. */
class LoggingTest {

    private static final String LOG = "org.slf4j.simpleLogger.log.";
    private Properties saved;

    @BeforeEach
    void save() {
        saved = (Properties) System.getProperties().clone();
    }

    @AfterEach
    void restore() {
        System.setProperties(saved);
    }

    @Test
    void traceRaisesTheDriversLoggersAndNeitherNettyNorGrpc() {
        Logging.configure(Logging.Level.TRACE, false);

        assertEquals("trace", System.getProperty(LOG + "io.lvmqos"));
        assertEquals("trace", System.getProperty(LOG + "rpc"));
        assertEquals("info", System.getProperty(LOG + "io.netty"));
        assertEquals("info", System.getProperty(LOG + "io.grpc"));
        assertEquals("info", System.getProperty("org.slf4j.simpleLogger.defaultLogLevel"));
    }

    @Test
    void levelsGivenAsJvmFlagsToLibraryLoggersAreDroppedAndTheDriversOwnAreKept() {
        System.setProperty("org.slf4j.simpleLogger.defaultLogLevel", "trace");
        System.setProperty(LOG + "io.grpc.netty.NettyServerHandler", "debug");
        System.setProperty(LOG + "io.lvmqos.exec.CommandRunner", "debug");

        Logging.configure(Logging.Level.INFO, false);

        assertEquals("info", System.getProperty("org.slf4j.simpleLogger.defaultLogLevel"));
        assertNull(System.getProperty(LOG + "io.grpc.netty.NettyServerHandler"));
        assertEquals("debug", System.getProperty(LOG + "io.lvmqos.exec.CommandRunner"));
    }

    @Test
    void aQuieterLevelQuietsTheLibrariesToo() {
        Logging.configure(Logging.Level.WARN, false);

        assertEquals("warn", System.getProperty("org.slf4j.simpleLogger.defaultLogLevel"));
        assertEquals("warn", System.getProperty(LOG + "io.netty"));
    }

    @Test
    void wireLoggingAloneRaisesTheTransport() {
        Logging.configure(Logging.Level.INFO, true);

        assertEquals("debug", System.getProperty(LOG + "io.netty"));
        assertEquals("debug", System.getProperty(LOG + "io.grpc"));
        assertEquals("info", System.getProperty(LOG + "io.lvmqos"));
    }

    @Test
    void theLevelFlagTakesAnyCaseAndRefusesOtherWords() {
        assertEquals(Logging.Level.DEBUG, Logging.Level.parse("DeBug"));
        assertThrows(IllegalArgumentException.class, () -> Logging.Level.parse("verbose"));
    }
}
