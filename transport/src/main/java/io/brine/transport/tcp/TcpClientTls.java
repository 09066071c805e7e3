package io.brine.transport.tcp;

import io.brine.transport.tls.TlsFiles;
import io.netty.handler.ssl.SslContext;
import io.netty.handler.ssl.SslContextBuilder;
import io.netty.handler.ssl.SslProvider;
import java.io.IOException;
import java.nio.file.Path;
import javax.net.ssl.SSLException;

/** The minion's side of the TCP transport's optional TLS layer. */
public final class TcpClientTls {

    private TcpClientTls() {}

    /**
     * A client context that trusts only the certificates in {@code caFile} (the CA that signed the master's
     * certificate, or that certificate itself), with the JDK's TLS 1.3 and 1.2.
     *
     * @param verifyHostname also require the master's certificate to name the host the minion connects to
     *     ({@code master} in minion.yaml), as HTTPS does
     */
    public static SslContext client(Path caFile, boolean verifyHostname) throws IOException {
        try {
            return SslContextBuilder.forClient()
                    .trustManager(TlsFiles.certificates(caFile))
                    .endpointIdentificationAlgorithm(verifyHostname ? "HTTPS" : null)
                    .sslProvider(SslProvider.JDK)
                    .protocols("TLSv1.3", "TLSv1.2")
                    .build();
        } catch (SSLException | IllegalArgumentException e) {
            throw new IOException("cannot use TLS CA file " + caFile + ": " + e.getMessage(), e);
        }
    }
}
