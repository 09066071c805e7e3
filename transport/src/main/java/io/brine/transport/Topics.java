package io.brine.transport;

import io.brine.protocol.MinionIds;
import java.nio.charset.StandardCharsets;

/**
 * The publish channel's topics (PROTOCOL.md 2.1), spelled here only: {@code m/<id>/} for one minion (the trailing
 * slash keeps {@code m/web1/} from being a prefix of {@code m/web10/}) and {@code b/} for all.
 */
public final class Topics {

    /** The broadcast topic every minion subscribes to. */
    public static final String BROADCAST = "b/";

    private static final String MINION_PREFIX = "m/";

    private Topics() {}

    /** {@code m/<id>/}. */
    public static String minion(String minionId) {
        return MINION_PREFIX + minionId + "/";
    }

    /** {@code m/<id>/} in ASCII, as ZeroMQ matches it. */
    public static byte[] minionBytes(String minionId) {
        return minion(minionId).getBytes(StandardCharsets.US_ASCII);
    }

    /** {@code b/} in ASCII. */
    public static byte[] broadcastBytes() {
        return BROADCAST.getBytes(StandardCharsets.US_ASCII);
    }

    /** The valid minion id in a topic {@code m/<id>/}, or null for any other topic. */
    public static String minionOf(String topic) {
        if (topic.length() < MINION_PREFIX.length() + 2 || !topic.startsWith(MINION_PREFIX) || !topic.endsWith("/")) {
            return null;
        }
        String id = topic.substring(MINION_PREFIX.length(), topic.length() - 1);
        return MinionIds.isValid(id) ? id : null;
    }
}
