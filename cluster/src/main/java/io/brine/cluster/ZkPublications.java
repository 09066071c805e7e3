package io.brine.cluster;

import java.io.IOException;
import java.net.URLDecoder;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Consumer;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.recipes.cache.ChildData;
import org.apache.curator.framework.recipes.cache.CuratorCache;
import org.apache.curator.framework.recipes.cache.CuratorCacheListener;
import org.apache.curator.framework.recipes.nodes.PersistentNode;
import org.apache.zookeeper.CreateMode;
import org.apache.zookeeper.KeeperException;

/**
 * Publications forwarded between the cluster's masters (ARCHITECTURE.md "Cluster mode"). The master a job is
 * published through writes {@code /publications/<jid>} (an announcement, opaque and signed by the master); every
 * master watches {@code /publications} and delivers the job to the targeted minions it holds sessions for, then
 * writes {@code /publications/<jid>/<master>}: whom it delivered to. {@code /masters/<master>} is an ephemeral
 * znode per running master, so whoever waits for reports knows whom to wait for, and stops waiting for a master
 * that died. Announcements are swept after a few minutes: a late master must not deliver an old job.
 */
public final class ZkPublications implements AutoCloseable {

    static final String PUBLICATIONS = "/publications";
    static final String MASTERS = "/masters";
    /** ZooKeeper refuses znodes over 1 MiB by default (jute.maxbuffer); stay well under it. */
    public static final int MAX_BYTES = 768 * 1024;

    /** Hears announcements ({@code jid}, data) and delivery reports ({@code jid}, master, data). */
    public interface Listener {
        void announced(String jid, byte[] data);

        void reported(String jid, String master, byte[] data);
    }

    private final CuratorFramework client;
    private final Clock clock;
    private final String master;
    private final ZkCalls calls;
    private PersistentNode presence;
    private CuratorCache cache;
    private CuratorCache masters;
    private final CountDownLatch mastersLoaded = new CountDownLatch(1);

    /** Whether an announcement was written, as far as this master can tell. */
    public enum Written {
        /** ZooKeeper answered that it is written. */
        YES,
        /**
         * No answer in time, or the connection was lost with the write on its way: it may be written now or later
         * (Curator retries), and then be delivered by the masters that hear it.
         */
        UNKNOWN
    }

    /** @param master this master's name (any text; it is escaped into a znode name) */
    public ZkPublications(CuratorFramework client, Clock clock, String master) {
        this.client = client;
        this.clock = clock;
        this.master = master;
        this.calls = ZkCalls.retrying(client, "the cluster's publications");
    }

    /** The znode name of a master's name: URL-escaped, so a path in it cannot make a znode path. */
    static String nodeName(String master) {
        return URLEncoder.encode(master, StandardCharsets.UTF_8);
    }

    private static String jobPath(String jid) {
        return PUBLICATIONS + "/" + jid;
    }

    /**
     * Announces this master (ephemeral, made again after a lost session) and starts hearing every announcement and
     * report, those already there included (the listener decides what is too old). Listener calls come on
     * Curator's thread and must not block.
     */
    public void start(Listener listener) throws IOException {
        calls.call(() -> {
            for (String path : List.of(PUBLICATIONS, MASTERS)) {
                try {
                    client.create().creatingParentContainersIfNeeded().forPath(path, new byte[0]);
                } catch (KeeperException.NodeExistsException e) {
                    // made by another master
                }
            }
            return null;
        });
        presence =
                new PersistentNode(client, CreateMode.EPHEMERAL, false, MASTERS + "/" + nodeName(master), new byte[0]);
        presence.start();
        cache = CuratorCache.build(client, PUBLICATIONS);
        cache.listenable()
                .addListener(CuratorCacheListener.builder()
                        .forCreatesAndChanges((old, node) -> heard(listener, node))
                        .build());
        cache.start();
        masters = CuratorCache.build(client, MASTERS);
        masters.listenable()
                .addListener(CuratorCacheListener.builder()
                        .forInitialized(mastersLoaded::countDown)
                        .build());
        masters.start();
    }

    private void heard(Listener listener, ChildData node) {
        String path = node.getPath();
        if (!path.startsWith(PUBLICATIONS + "/") || node.getData() == null) {
            return;
        }
        String[] parts = path.substring(PUBLICATIONS.length() + 1).split("/");
        if (parts.length == 1) {
            listener.announced(parts[0], node.getData());
        } else if (parts.length == 2) {
            listener.reported(parts[0], URLDecoder.decode(parts[1], StandardCharsets.UTF_8), node.getData());
        }
    }

    /**
     * Waits (bounded) until this master's presence znode exists, so other masters wait for its reports, and it has
     * read the others', so it waits for theirs.
     */
    public boolean awaitPresence(Duration timeout) throws InterruptedException {
        long deadline = System.nanoTime() + timeout.toNanos();
        return presence.waitForInitialCreate(timeout.toMillis(), TimeUnit.MILLISECONDS)
                && mastersLoaded.await(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
    }

    /**
     * Writes the announcement of {@code jid}, waiting at most {@code within} for ZooKeeper's answer: a publisher is
     * waiting, and without quorum Curator would retry for a minute.
     *
     * @throws IOException when it is certainly not written (too large, refused by ZooKeeper)
     */
    public Written announce(String jid, byte[] data, Duration within) throws IOException {
        checkSize(data);
        CompletableFuture<KeeperException.Code> answered = new CompletableFuture<>();
        calls.call(() -> client.create()
                .inBackground((c, event) -> answered.complete(KeeperException.Code.get(event.getResultCode())))
                .forPath(jobPath(jid), data));
        KeeperException.Code code;
        try {
            code = answered.get(within.toMillis(), TimeUnit.MILLISECONDS);
        } catch (TimeoutException e) {
            return Written.UNKNOWN;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return Written.UNKNOWN;
        } catch (ExecutionException e) {
            throw new IOException("the cluster's publications cannot be written: " + e.getCause(), e.getCause());
        }
        return switch (code) {
            case OK -> Written.YES;
            case CONNECTIONLOSS, OPERATIONTIMEOUT, SESSIONEXPIRED, SESSIONMOVED -> Written.UNKNOWN;
            default -> throw new IOException("ZooKeeper refused the announcement: " + code);
        };
    }

    /** As {@link #report}, without waiting: a failure is handed to {@code failed} (on Curator's thread). */
    public void reportInBackground(String jid, byte[] data, Consumer<String> failed) throws IOException {
        checkSize(data);
        calls.call(() -> client.create()
                .inBackground((c, event) -> {
                    KeeperException.Code code = KeeperException.Code.get(event.getResultCode());
                    if (code != KeeperException.Code.OK) {
                        failed.accept(code.toString());
                    }
                })
                .forPath(jobPath(jid) + "/" + nodeName(master), data));
    }

    /** Writes (or rewrites, when a delivery failed later) this master's report for {@code jid}. */
    public void report(String jid, byte[] data) throws IOException {
        checkSize(data);
        String path = jobPath(jid) + "/" + nodeName(master);
        calls.call(() -> {
            try {
                client.create().forPath(path, data);
            } catch (KeeperException.NodeExistsException e) {
                client.setData().forPath(path, data);
            } catch (KeeperException.NoNodeException e) {
                // swept meanwhile: too late to matter
            }
            return null;
        });
    }

    /** The reports on {@code jid} by master name, from this master's view. */
    public Map<String, byte[]> reports(String jid) {
        Map<String, byte[]> reports = new TreeMap<>();
        String prefix = jobPath(jid) + "/";
        if (cache == null) {
            return reports;
        }
        cache.stream()
                .filter(node -> node.getPath().startsWith(prefix) && node.getData() != null)
                .forEach(node -> reports.put(
                        URLDecoder.decode(node.getPath().substring(prefix.length()), StandardCharsets.UTF_8),
                        node.getData()));
        return reports;
    }

    /**
     * The masters running, by name, from this master's view of their presence znodes (no call to ZooKeeper, so it
     * answers at once without quorum too).
     */
    public Set<String> masters() {
        Set<String> names = new TreeSet<>();
        if (masters == null) {
            return names;
        }
        String prefix = MASTERS + "/";
        masters.stream()
                .filter(node -> node.getPath().startsWith(prefix))
                .forEach(node -> names.add(
                        URLDecoder.decode(node.getPath().substring(prefix.length()), StandardCharsets.UTF_8)));
        return names;
    }

    /** Removes the announcements (and their reports) made more than {@code keep} ago. */
    public int sweep(Duration keep) throws IOException {
        long cutoff = clock.millis() - keep.toMillis();
        List<String> jids =
                calls.call(() -> new ArrayList<>(client.getChildren().forPath(PUBLICATIONS)));
        return calls.sweep(PUBLICATIONS, jids, cutoff);
    }

    private static void checkSize(byte[] data) {
        if (data.length > MAX_BYTES) {
            throw new IllegalArgumentException("over " + MAX_BYTES + " bytes");
        }
    }

    @Override
    public void close() {
        if (cache != null) {
            cache.close();
        }
        if (masters != null) {
            masters.close();
        }
        if (presence != null) {
            try {
                presence.close();
            } catch (IOException e) {
                // the session's end removes it anyway
            }
        }
    }
}
