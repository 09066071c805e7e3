package io.brine.transport;

import static org.assertj.core.api.Assertions.assertThat;

import java.net.InetSocketAddress;
import org.junit.jupiter.api.Test;

class EndpointsTest {

    @Test
    void ipv6LiteralsAreBracketedOnce() {
        assertThat(Endpoints.tcp("::1", 4506)).isEqualTo("tcp://[::1]:4506");
        assertThat(Endpoints.tcp("[::1]", 4506)).isEqualTo("tcp://[::1]:4506");
        assertThat(Endpoints.tcp("127.0.0.1", 4506)).isEqualTo("tcp://127.0.0.1:4506");
        assertThat(Endpoints.tcp("salt.example.com", 4505)).isEqualTo("tcp://salt.example.com:4505");
        assertThat(Endpoints.bracketed("fe80::1")).isEqualTo("[fe80::1]");
    }

    @Test
    void boundEndpointsParseWithoutALookup() {
        assertThat(Endpoints.parseTcp("tcp://127.0.0.1:4506")).isEqualTo(new InetSocketAddress("127.0.0.1", 4506));
        InetSocketAddress v6 = Endpoints.parseTcp("tcp://[::1]:4505");
        assertThat(v6.getAddress().isLoopbackAddress()).isTrue();
        assertThat(v6.getPort()).isEqualTo(4505);
    }
}
