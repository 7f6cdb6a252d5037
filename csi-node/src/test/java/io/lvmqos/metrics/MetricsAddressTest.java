package io.lvmqos.metrics;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.InetAddress;
import java.net.InetSocketAddress;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

class MetricsAddressTest {

    @Test
    void aPortAloneListensOnEveryInterface() {
        InetSocketAddress address = MetricsAddress.parse(":9808");
        assertTrue(address.getAddress().isAnyLocalAddress(), address.toString());
        assertEquals(9808, address.getPort());
    }

    @ParameterizedTest(name = "{0}")
    @CsvSource({
            "127.0.0.1:9808, 127.0.0.1, 9808",
            "0.0.0.0:1, 0.0.0.0, 1",
            "[::1]:9808, ::1, 9808",
            "localhost:65535, 127.0.0.1, 65535",
    })
    void aHostAndPortListenOnThatAddress(String flag, String ip, int port) throws Exception {
        InetSocketAddress address = MetricsAddress.parse(flag);
        if (flag.startsWith("localhost")) {
            assertTrue(address.getAddress().isLoopbackAddress(), address.toString());
        } else {
            assertEquals(InetAddress.getByName(ip), address.getAddress());
        }
        assertEquals(port, address.getPort());
    }

    @ParameterizedTest(name = "''{0}'': {1}")
    @CsvSource(delimiter = '|', value = {
            "''            | it is empty",
            "'  '          | it is empty",
            "9808          | there is no ':port'",
            "127.0.0.1     | there is no ':port'",
            "::1:9808      | an IPv6 address must be in brackets",
            ":             | port '' is not a number",
            "host:         | port '' is not a number",
            ":http         | port 'http' is not a number",
            ":-1           | port '-1' is not a number",
            ":0            | port 0 is outside 1..65535",
            ":65536        | port 65536 is outside 1..65535",
            ":123456       | port '123456' is not a number",
            "a b:9808      | the host part is not a host name or an IP address",
            "[::1:9808     | the host part is not a host name or an IP address",
            "no-such-host.invalid:9808 | host 'no-such-host.invalid' does not resolve",
    })
    void aMalformedAddressIsRefusedSayingWhy(String flag, String why) {
        var e = assertThrows(IllegalArgumentException.class, () -> MetricsAddress.parse(flag));
        assertTrue(e.getMessage().contains(why), e.getMessage());
        assertTrue(e.getMessage().contains("expected :PORT for every interface or HOST:PORT"), e.getMessage());
    }

    @Test
    void nullIsRefusedLikeEmpty() {
        var e = assertThrows(IllegalArgumentException.class, () -> MetricsAddress.parse(null));
        assertTrue(e.getMessage().contains("it is empty"), e.getMessage());
    }
}
