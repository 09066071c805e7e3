package io.brine.master.session;

import io.brine.daemon.config.MasterConfig;
import io.brine.protocol.crypto.SessionKey;
import io.brine.transport.Peer;
import java.util.Optional;

/** A publisher's session: its name and what it may do (no ACL: the local administrator, who may do anything). */
public final class PublisherSession extends Session {

    private final String name;
    private final Optional<MasterConfig.PublisherAcl> acl;

    PublisherSession(
            String name,
            SessionId sessionId,
            SessionKey requestKey,
            Optional<MasterConfig.PublisherAcl> acl,
            Peer peer) {
        super(sessionId, requestKey, peer);
        this.name = name;
        this.acl = acl;
    }

    public String name() {
        return name;
    }

    /** Empty for the local administrator ({@code root}). */
    public Optional<MasterConfig.PublisherAcl> acl() {
        return acl;
    }

    /** An authentic frame came from {@code from}: answers go there from now on. */
    public void seen(Peer from) {
        peer(from);
    }

    @Override
    public String toString() {
        return "PublisherSession[" + name + "]";
    }
}
