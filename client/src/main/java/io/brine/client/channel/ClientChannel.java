package io.brine.client.channel;

import java.io.IOException;
import java.time.Duration;

/** A publisher's connection to the master's request port ({@code BrineClient}): blocking, owned by one thread. */
public interface ClientChannel extends AutoCloseable {

    void send(byte[] frame) throws IOException;

    /** The next frame, or null when none arrived within {@code timeout}. */
    byte[] receive(Duration timeout) throws IOException;

    @Override
    void close();
}
