package io.brine.protocol.message;

import java.util.List;
import java.util.Map;

/** What travels sealed inside a {@link SessionFrame}. */
public sealed interface SessionMessage {

    MessageType type();

    /** Minion to master: the outcome of a job. The minion's identity comes from the session, not from here. */
    record Return(String jid, String fun, Object returnValue, int retcode, boolean success, long durationMs)
            implements SessionMessage {
        @Override
        public MessageType type() {
            return MessageType.RETURN;
        }
    }

    /** Minion to master: its grains, at auth and when they change. Claims, never authority. */
    record Grains(Map<String, Object> grains) implements SessionMessage {
        public Grains {
            grains = Copies.map(grains);
        }

        @Override
        public MessageType type() {
            return MessageType.GRAINS;
        }
    }

    /** Minion to master: still here, holding this publish key generation. */
    record Heartbeat(long generation) implements SessionMessage {
        @Override
        public MessageType type() {
            return MessageType.HEARTBEAT;
        }
    }

    /** Minion to master: send me the publish key of this generation (it saw a publication it cannot open). */
    record KeyRequest(long generation) implements SessionMessage {
        @Override
        public MessageType type() {
            return MessageType.KEY_REQUEST;
        }
    }

    /** Master to minion: these returns are stored; stop resending them. */
    record Ack(List<String> jids) implements SessionMessage {
        public Ack {
            jids = List.copyOf(jids);
        }

        @Override
        public MessageType type() {
            return MessageType.ACK;
        }
    }

    /** Master to minion: a new publish key generation (rotation), and the serial floor that goes with it. */
    record KeyUpdate(long generation, byte[] publishKey, long serialFloor) implements SessionMessage {
        @Override
        public MessageType type() {
            return MessageType.KEY_UPDATE;
        }

        @Override
        public String toString() {
            return "KeyUpdate[generation=" + generation + ", publishKey=[redacted], serialFloor=" + serialFloor + "]";
        }
    }

    /** Master to minion: the current generation, so a minion that missed a rotation notices. */
    record HeartbeatReply(long generation) implements SessionMessage {
        @Override
        public MessageType type() {
            return MessageType.HEARTBEAT_REPLY;
        }
    }
}
