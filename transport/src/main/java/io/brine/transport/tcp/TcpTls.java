package io.brine.transport.tcp;

import io.brine.transport.tls.TlsFiles;
import io.netty.handler.ssl.ClientAuth;
import io.netty.handler.ssl.SslContext;
import io.netty.handler.ssl.SslContextBuilder;
import io.netty.handler.ssl.SslProvider;
import java.io.IOException;
import java.nio.file.Path;
import javax.net.ssl.SSLException;

/** The TCP transport's optional TLS layer, under brine's own message crypto, from PEM files. */
public final class TcpTls {

    private TcpTls() {}

    /**
     * A server context from a PEM certificate chain and its unencrypted private key (PKCS#8 or PKCS#1), with the
     * JDK's TLS: TLS 1.3 and 1.2 only.
     */
    public static SslContext server(Path certificateChain, Path privateKey) throws IOException {
        return build(server(certificateChain, privateKey, ClientAuth.NONE), certificateChain, privateKey);
    }

    /**
     * As {@link #server(Path, Path)}, and asks each client for a certificate that one of the CAs in {@code clientCa}
     * (PEM) signed: one that does not verify (another CA, expired, not for TLS clients) fails the handshake; one not
     * sent fails it too when {@code required}.
     */
    public static SslContext server(Path certificateChain, Path privateKey, Path clientCa, boolean required)
            throws IOException {
        SslContextBuilder builder =
                server(certificateChain, privateKey, required ? ClientAuth.REQUIRE : ClientAuth.OPTIONAL);
        builder.trustManager(TlsFiles.certificates(clientCa));
        return build(builder, certificateChain, privateKey);
    }

    private static SslContextBuilder server(Path certificateChain, Path privateKey, ClientAuth clientAuth)
            throws IOException {
        try {
            return SslContextBuilder.forServer(TlsFiles.privateKey(privateKey), TlsFiles.certificates(certificateChain))
                    .sslProvider(SslProvider.JDK)
                    .protocols("TLSv1.3", "TLSv1.2")
                    .clientAuth(clientAuth);
        } catch (IllegalArgumentException e) {
            throw new IOException(
                    "cannot use TLS certificate " + certificateChain + " with key " + privateKey + ": "
                            + e.getMessage(),
                    e);
        }
    }

    private static SslContext build(SslContextBuilder builder, Path certificateChain, Path privateKey)
            throws IOException {
        try {
            return builder.build();
        } catch (SSLException | IllegalArgumentException e) {
            throw new IOException(
                    "cannot use TLS certificate " + certificateChain + " with key " + privateKey + ": "
                            + e.getMessage(),
                    e);
        }
    }
}
