package io.brine.master.client;

import java.time.Duration;

/** A publisher's connection to the master's request port. Owned by one thread. */
interface ClientChannel extends AutoCloseable {

    void send(byte[] frame) throws ClientException;

    /** The next frame, or null when none arrived within {@code timeout}. */
    byte[] receive(Duration timeout) throws ClientException;

    @Override
    void close();
}
