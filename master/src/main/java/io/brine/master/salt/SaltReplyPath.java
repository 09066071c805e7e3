package io.brine.master.salt;

import io.brine.protocol.salt.SaltValue;

/**
 * Where the answer to one Salt request goes, encoded as the request's transport carries it: a ZeroMQ payload, or a
 * TCP frame echoing the request's head. Thread-safe; answers may be sent from any thread.
 */
public interface SaltReplyPath {

    /** Sends {@code value} as the whole answer to the request. */
    void reply(SaltValue value);

    /** The sender is minion {@code id} (authenticated): routes publications and lifts the pre-auth size limit. */
    void bind(String id);

    /** Closes the sender's connection, where it has one (a Salt TCP publish connection whose hello failed). */
    void disconnect();

    /**
     * Keeps the sender's connection open, unbound (a Salt TCP publish connection whose hello is sealed with an aes
     * key the master does not hold); closes it where the transport cannot keep it.
     */
    void keepUnproven();

    /** The sender's address, for logs, audit and rate limits. */
    String remoteAddress();
}
