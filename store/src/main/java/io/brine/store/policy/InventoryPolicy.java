package io.brine.store.policy;

import io.brine.protocol.MinionIds;
import io.brine.protocol.codec.Timestamps;
import io.brine.store.keys.PolicyVerdict;
import java.net.InetAddress;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * {@code inventory_file}: accepts a new key only when the inventory expects the machine (OpenShift's machine
 * approver, in brine's terms). All of these must hold:
 * <ul>
 * <li>the inventory has a record for the id (and no key is accepted for it yet: policies are only asked about
 * unknown and pending keys);</li>
 * <li>the request comes within {@code inventory_window} after the record's {@code created_at} (and no earlier than
 * the allowed clock skew before it);</li>
 * <li>the connection's source address is one of the record's addresses;</li>
 * <li>the minion claims at least one address ({@code ipv4}/{@code ipv6} grains) besides loopback and link-local
 * ones, and each of those is one of the record's addresses.</li>
 * </ul>
 * The source address is the strong check; the claimed addresses catch a machine that is not what the record
 * describes (they are claims, and cost an attacker nothing).
 */
public final class InventoryPolicy implements AcceptancePolicy {

    public static final String RULE = "inventory_file";
    static final int MAX_BYTES = 16 * 1024 * 1024;

    private static final Logger LOG = LoggerFactory.getLogger(InventoryPolicy.class);

    private final WatchedFile<Inventory> file;
    private final Duration window;
    private final Clock clock;

    public InventoryPolicy(Path file, Duration window, Clock clock) {
        this.file = new WatchedFile<>(RULE, file, clock, InventoryPolicy::parse, Inventory.EMPTY, MAX_BYTES);
        this.window = window;
        this.clock = clock;
        this.file.current(); // read now, so that problems are reported at start
    }

    private static Inventory parse(Path path, byte[] content) {
        Inventory inventory = Inventory.parse(path, content);
        for (String problem : inventory.problems()) {
            LOG.warn("{} {}: {}", RULE, path, problem);
        }
        return inventory;
    }

    @Override
    public PolicyDecision evaluate(AuthAttempt attempt) {
        WatchedFile.Loaded<Inventory> loaded = file.current();
        if (loaded.problem().isPresent()) {
            return none(loaded.problem().get());
        }
        Optional<Inventory.Record> found = loaded.value().record(attempt.id());
        if (found.isEmpty()) {
            return none("no record for " + attempt.id() + " in " + file.file());
        }
        Inventory.Record record = found.get();
        Instant now = clock.instant();
        if (now.isBefore(record.createdAt().minus(Timestamps.MAX_CLOCK_SKEW))) {
            return none("the record is created at " + record.createdAt() + ", after now");
        }
        if (now.isAfter(record.createdAt().plus(window))) {
            return none("the window of " + window.toSeconds() + " s after created_at " + record.createdAt()
                    + " has passed");
        }
        Optional<InetAddress> source = IpAddresses.parse(attempt.remoteAddress());
        if (source.isEmpty() || !record.addresses().contains(source.get())) {
            return none("the request comes from " + MinionIds.printable(attempt.remoteAddress())
                    + ", not one of the record's addresses");
        }
        List<InetAddress> claimed = new ArrayList<>();
        for (String grain : List.of("ipv4", "ipv6")) {
            Object value = attempt.claims().get(grain);
            for (Object item : value instanceof List<?> list ? list : value == null ? List.of() : List.of(value)) {
                Optional<InetAddress> address =
                        item instanceof String text ? IpAddresses.parse(text) : Optional.empty();
                if (address.isEmpty()) {
                    return none("claim " + grain + " holds something that is not an IP address");
                }
                if (!IpAddresses.isHostLocal(address.get())) {
                    claimed.add(address.get());
                }
            }
        }
        if (claimed.isEmpty()) {
            return none("the minion claims no address besides loopback and link-local ones (ipv4/ipv6 grains)");
        }
        for (InetAddress address : claimed) {
            if (!record.addresses().contains(address)) {
                return none("the minion claims the address " + address.getHostAddress()
                        + ", which is not one of the record's");
            }
        }
        return new PolicyDecision(
                PolicyVerdict.ACCEPT,
                RULE + " " + file.file() + " " + attempt.id(),
                "expected since " + record.createdAt() + " (window " + window.toSeconds() + " s); source "
                        + source.get().getHostAddress() + " and " + claimed.size()
                        + " claimed addresses are the record's");
    }

    private static PolicyDecision none(String reason) {
        return new PolicyDecision(PolicyVerdict.NONE, RULE, reason);
    }

    @Override
    public String toString() {
        return RULE + " " + file.file();
    }
}
