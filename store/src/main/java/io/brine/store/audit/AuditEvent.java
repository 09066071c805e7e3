package io.brine.store.audit;

import java.util.Objects;
import java.util.regex.Pattern;

/**
 * One line of the audit log. {@code event} says what happened ({@code key-accepted}, {@code auth-refused}, ...);
 * the other fields are optional (null = not written). Never put secrets here: fields are written as they are.
 *
 * @param event       what happened, as {@code area-outcome} (lower case, words joined by hyphens)
 * @param actor       who did it: {@code master}, {@code brine-key:root}, ...
 * @param id          the minion id concerned
 * @param from        the state before ({@code pending}, {@code accepted}, ...)
 * @param to          the state after
 * @param fingerprint the fingerprint of the key concerned
 * @param reason      why, in a few words
 * @param source      where the request came from (a peer address), for network events
 */
public record AuditEvent(
        String event,
        String actor,
        String id,
        String from,
        String to,
        String fingerprint,
        String reason,
        String source) {

    /** The one style of event names ({@code key-accepted}, {@code auth-pending}), which audit consumers match on. */
    private static final Pattern NAME = Pattern.compile("[a-z]+(-[a-z0-9]+)*");

    public AuditEvent {
        Objects.requireNonNull(event, "event");
        Objects.requireNonNull(actor, "actor");
        if (!NAME.matcher(event).matches()) {
            throw new IllegalArgumentException("audit event name " + event + " is not area-outcome in lower case");
        }
    }

    /** The event of a key that entered {@code stateLabel} ({@code pending}, {@code accepted}, ...). */
    public static String keyChange(String stateLabel) {
        return "key-" + stateLabel;
    }

    public static Builder builder(String event, String actor) {
        return new Builder(event, actor);
    }

    public static final class Builder {
        private final String event;
        private final String actor;
        private String id;
        private String from;
        private String to;
        private String fingerprint;
        private String reason;
        private String source;

        private Builder(String event, String actor) {
            this.event = event;
            this.actor = actor;
        }

        public Builder id(String id) {
            this.id = id;
            return this;
        }

        public Builder from(String from) {
            this.from = from;
            return this;
        }

        public Builder to(String to) {
            this.to = to;
            return this;
        }

        public Builder fingerprint(String fingerprint) {
            this.fingerprint = fingerprint;
            return this;
        }

        public Builder reason(String reason) {
            this.reason = reason;
            return this;
        }

        public Builder source(String source) {
            this.source = source;
            return this;
        }

        public AuditEvent build() {
            return new AuditEvent(event, actor, id, from, to, fingerprint, reason, source);
        }
    }
}
