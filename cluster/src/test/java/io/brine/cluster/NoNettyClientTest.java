package io.brine.cluster;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.brine.daemon.config.ClusterConfig;
import java.io.File;
import java.net.MalformedURLException;
import java.net.URL;
import java.net.URLClassLoader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.Arrays;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.test.TestingServer;
import org.junit.jupiter.api.Test;

/**
 * brine's ZooKeeper connection works with no Netty on the class path (brine-key's enforcer bans it): run in a class
 * loader that has this module's class path minus every Netty jar, against a real server in this JVM.
 */
class NoNettyClientTest {

    /** Runs inside the Netty-free class loader: connects as a master does, writes and reads back. */
    public static final class Probe {
        public static String roundTrip(String connect) throws Exception {
            try (CuratorFramework client = ClusterConnection.open(ClusterConfig.of(connect))) {
                client.create()
                        .creatingParentsIfNeeded()
                        .forPath("/probe", "no netty".getBytes(StandardCharsets.UTF_8));
                return new String(client.getData().forPath("/probe"), StandardCharsets.UTF_8);
            }
        }
    }

    @Test
    void theClusterConnectionRunsWithoutNetty() throws Exception {
        String classPath = System.getProperty("surefire.test.class.path", System.getProperty("java.class.path"));
        URL[] urls = Arrays.stream(classPath.split(File.pathSeparator))
                .filter(entry -> !entry.isBlank())
                .filter(entry -> !Path.of(entry).getFileName().toString().startsWith("netty-"))
                .map(entry -> {
                    try {
                        return Path.of(entry).toUri().toURL();
                    } catch (MalformedURLException e) {
                        throw new IllegalStateException(e);
                    }
                })
                .toArray(URL[]::new);
        try (TestingServer server = new TestingServer();
                URLClassLoader noNetty = new URLClassLoader(urls, ClassLoader.getPlatformClassLoader())) {
            assertThatThrownBy(() -> Class.forName("io.netty.handler.ssl.SslContext", false, noNetty))
                    .isInstanceOf(ClassNotFoundException.class);
            Class<?> probe = Class.forName(Probe.class.getName(), true, noNetty);
            assertThat(probe.getClassLoader()).isSameAs(noNetty);

            Object read = probe.getMethod("roundTrip", String.class).invoke(null, server.getConnectString());

            assertThat(read).isEqualTo("no netty");
        }
    }
}
