package io.lvmqos.server;

import static org.junit.jupiter.api.Assertions.assertNotNull;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The plugin's socket is served by Netty's epoll transport, whose native library must be on the class
 * path for the node's architecture; the shaded jar carries what the runtime class path carries, so one
 * jar runs on amd64 and on arm64 nodes.
 */
class EpollNativesTest {

    @ParameterizedTest
    @ValueSource(strings = {"x86_64", "aarch_64"})
    void classPathCarriesTheEpollLibraryOf(String arch) {
        String library = "META-INF/native/libnetty_transport_native_epoll_" + arch + ".so";
        assertNotNull(getClass().getClassLoader().getResource(library), library);
    }
}
