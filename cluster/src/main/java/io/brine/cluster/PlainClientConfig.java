package io.brine.cluster;

import org.apache.zookeeper.ClientCnxnSocketNIO;
import org.apache.zookeeper.client.ZKClientConfig;

/**
 * ZooKeeper's client configuration without its TLS part, so the client runs without Netty (brine-key bans it).
 * ZooKeeper's own constructor reads the TLS system properties through {@code ClientX509Util}, which needs Netty's
 * SSL classes on the class path even for a plain connection; brine connects with the plain NIO socket only, so
 * this reads every other system property ZooKeeper's does and fixes the socket to NIO.
 */
final class PlainClientConfig extends ZKClientConfig {

    @Override
    protected void handleBackwardCompatibility() {
        for (String property : new String[] {
            "jute.maxbuffer",
            "zookeeper.kinit",
            "sun.security.jgss.native",
            ZK_SASL_CLIENT_USERNAME,
            ZK_SASL_CLIENT_CANONICALIZE_HOSTNAME,
            LOGIN_CONTEXT_NAME_KEY,
            ENABLE_CLIENT_SASL_KEY,
            ZOOKEEPER_SERVER_REALM,
            DISABLE_AUTO_WATCH_RESET
        }) {
            setProperty(property, System.getProperty(property));
        }
        setProperty(ZOOKEEPER_CLIENT_CNXN_SOCKET, ClientCnxnSocketNIO.class.getName());
        setProperty(SECURE_CLIENT, "false");
    }
}
