package io.brine.master.publish;

import java.util.Collection;
import java.util.List;
import java.util.Map;

/**
 * Jobs for stock Salt minions, in Salt's publication envelope (SALT.md §6): which of a job's targets are Salt
 * minions, and the one envelope they all take. Implemented by the Salt package ({@code SaltPublisher}); {@link #none}
 * when {@code salt_minions} is off.
 */
public interface SaltEnvelopes {

    /** The Salt minions among {@code ids}; the others are brine minions. */
    List<String> saltMinions(Collection<String> ids);

    /** One envelope for all of {@code targets}: what goes on the publish channel. */
    byte[] envelope(
            String jid,
            String fun,
            List<Object> args,
            Map<String, Object> kwargs,
            String user,
            List<String> targets,
            long serial);

    /** Without {@code salt_minions}: every target is a brine minion. */
    static SaltEnvelopes none() {
        return new SaltEnvelopes() {
            @Override
            public List<String> saltMinions(Collection<String> ids) {
                return List.of();
            }

            @Override
            public byte[] envelope(
                    String jid,
                    String fun,
                    List<Object> args,
                    Map<String, Object> kwargs,
                    String user,
                    List<String> targets,
                    long serial) {
                throw new IllegalStateException("no Salt minions without salt_minions");
            }
        };
    }
}
