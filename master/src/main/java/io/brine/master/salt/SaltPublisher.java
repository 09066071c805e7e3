package io.brine.master.salt;

import io.brine.master.publish.SaltEnvelopes;
import io.brine.protocol.salt.SaltAuthResponder;
import io.brine.protocol.salt.SaltPublication;
import io.brine.protocol.salt.SaltRsa;
import io.brine.protocol.salt.SaltValue;
import io.brine.protocol.salt.SaltValues;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;

/**
 * Jobs in Salt's publication envelope (SALT.md §6) for the Salt minions a job targets: the target as
 * {@code tgt_type: list} of the ids the master resolved (a Salt minion re-matches every publication; a list makes it
 * agree with brine's matchers whatever the admin typed), sealed with the current {@code aes} key and signed as
 * Salt's {@code sign_pub_messages} expects.
 */
public final class SaltPublisher implements SaltEnvelopes {

    /** Salt's minions verify with the algorithm the envelope names; SHA-224 rather than Salt's SHA-1 default. */
    static final SaltRsa.Signing SIGNING = SaltRsa.Signing.PKCS1V15_SHA224;

    private final SaltKeys keys;

    /** Publications are sealed and signed with the current {@code aes} generation's key and master key. */
    public SaltPublisher(SaltKeys keys) {
        this.keys = keys;
    }

    /**
     * The Salt minions among {@code ids}: those whose key the store filed as a Salt minion's ({@link SaltKeys#isSalt});
     * a Salt session alone makes no minion a Salt minion. The others are brine minions: their jobs go only to their
     * brine sessions.
     */
    @Override
    public List<String> saltMinions(Collection<String> ids) {
        List<String> salt = new ArrayList<>();
        for (String id : ids) {
            if (keys.isSalt(id)) {
                salt.add(id);
            }
        }
        return salt;
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
        List<SaltValue> tgt = new ArrayList<>(targets.size());
        targets.forEach(id -> tgt.add(SaltValue.str(id)));
        SaltPublication publication = new SaltPublication(
                fun,
                SaltValues.jobArgs(args, kwargs),
                new SaltValue.Array(tgt),
                jid,
                "",
                "list",
                user,
                List.of(),
                serial);
        SaltAuthResponder generation = keys.responder();
        return publication.envelope(generation.aes(), generation.master().getPrivate(), SIGNING);
    }
}
