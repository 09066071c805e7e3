package io.brine.it;

import static io.brine.protocol.testing.SuiteDefaults.WAIT;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;

import com.fasterxml.jackson.databind.ObjectMapper;
import io.brine.client.cli.BrineCli;
import io.brine.daemon.config.MasterConfig;
import io.brine.minion.MinionDaemon;
import io.brine.minion.MinionState;
import io.brine.transport.zmtp.ZmtpServerTransport;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.OutputStreamWriter;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.io.TempDir;

/**
 * The {@code brine} CLI in-process ({@link BrineCli#run}) against a real master and minions on loopback, reading a
 * {@code master.yaml} written with the ports the master actually bound, as an admin on the master's host would.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class BrineCliIT {

    private static final ObjectMapper JSON = new ObjectMapper();

    private Path dir;
    private Fleet fleet;
    private Path conf;

    /** What one run of the CLI did. */
    private record Run(int exit, String out, String err) {}

    @BeforeAll
    void startFleet(@TempDir Path tempDir) throws Exception {
        dir = tempDir;
        fleet = new Fleet(dir).seedMasterKeys(130, 131).keysFrom(132);
        fleet.startMaster(b -> b.acceptance(
                        MasterConfig.Acceptance.builder().autoAccept(true).build())
                .nodegroups(
                        new LinkedHashMap<>(Map.of("webs", "G@role:web", "dbs", "L@m3", "most", "N@webs or N@dbs"))));
        fleet.startMinion("m1", b -> b.grains(Map.of("role", List.of("web"))));
        fleet.startMinion("m2", b -> b.grains(Map.of("role", List.of("web"))));
        fleet.startMinion("m3", b -> b.grains(Map.of("role", List.of("db"))));
        fleet.startMinion("spare");
        await().until(() -> fleet.minions.stream().allMatch(m -> m.minion().state() == MinionState.ACCEPTED));
        await().until(() -> List.of("m1", "m2", "m3").stream()
                .allMatch(id -> fleet.master.master().grains().get(id).containsKey("role")));
        conf = masterYaml(
                "conf",
                fleet.master.master().addresses().request().getPort(),
                fleet.master.master().addresses().publish().getPort());
    }

    @AfterAll
    void stopFleet() {
        fleet.close();
    }

    /** A config dir whose master.yaml names these ports and the fleet master's pki dir and cachedir. */
    private Path masterYaml(String name, int retPort, int publishPort) throws Exception {
        Path configDir = Files.createDirectories(dir.resolve(name));
        Files.writeString(
                configDir.resolve("master.yaml"),
                String.join(
                        "\n",
                        "interface: 127.0.0.1",
                        "ret_port: " + retPort,
                        "publish_port: " + publishPort,
                        "pki_dir: " + fleet.masterConfig.pkiDir(),
                        "cachedir: " + fleet.masterConfig.cachedir(),
                        ""),
                StandardCharsets.UTF_8);
        return configDir;
    }

    private static Run brine(String... args) {
        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();
        int exit = BrineCli.run(args, new PrintWriter(out, true), new PrintWriter(err, true));
        return new Run(exit, out.toString(), err.toString());
    }

    /** brine -c CONF ARGS... */
    private Run brineHere(String... args) {
        String[] all = new String[args.length + 2];
        all[0] = "-c";
        all[1] = conf.toString();
        System.arraycopy(args, 0, all, 2, args.length);
        return brine(all);
    }

    @SuppressWarnings("unchecked")
    private static Map<String, Object> json(String text) throws Exception {
        return JSON.readValue(text, Map.class);
    }

    private static void assertOneLineNoTrace(Run run) {
        assertThat(run.err().lines()).hasSize(1);
        assertThat(run.err()).startsWith("brine: ").doesNotContain("Exception").doesNotContain("\tat ");
        assertThat(run.out()).isEmpty();
    }

    // ---- publishing ----

    @Test
    void jsonOutputMapsEachMinionThatReturnedToItsReturn() throws Exception {
        Run run = brineHere("--out", "json", "m*", "test.ping");
        assertThat(run.exit()).as(run.err()).isZero();
        assertThat(json(run.out())).isEqualTo(Map.of("m1", true, "m2", true, "m3", true));
        assertThat(run.err()).startsWith("returned 3 of 3 targeted (jid ");
    }

    @Test
    void textOutputIsEachIdThenItsIndentedReturn() {
        Run run = brineHere("-L", "m1", "test.ping");
        assertThat(run.exit()).as(run.err()).isZero();
        assertThat(run.out()).isEqualTo("m1:\n    True\n");
        assertThat(run.err()).startsWith("returned 1 of 1 targeted");
    }

    @Test
    void eachTargetOptionSelectsWhatItSays() throws Exception {
        assertThat(json(brineHere("--out", "json", "-L", "m1,m3", "test.ping").out())
                        .keySet())
                .containsExactlyInAnyOrder("m1", "m3");
        assertThat(json(brineHere("--out", "json", "-E", "m[12]", "test.ping").out())
                        .keySet())
                .containsExactlyInAnyOrder("m1", "m2");
        assertThat(json(brineHere("--out", "json", "-G", "role:db", "test.ping").out())
                        .keySet())
                .containsExactly("m3");
        assertThat(json(brineHere("--out", "json", "-C", "G@role:web and not m1", "test.ping")
                                .out())
                        .keySet())
                .containsExactly("m2");
    }

    @Test
    void grainRegexAndSubnetTargetsAsInSalt() throws Exception {
        assertThat(json(brineHere("--out", "json", "-P", "role:w.b", "test.ping")
                                .out())
                        .keySet())
                .containsExactlyInAnyOrder("m1", "m2");
        assertThat(json(brineHere("--out", "json", "-C", "P@role:D. or L@m1", "test.ping")
                                .out())
                        .keySet())
                .containsExactlyInAnyOrder("m1", "m3");
        // Every minion lists its loopback address in its ipv4 grain (spare may be stopped by another test).
        assertThat(json(brineHere("--out", "json", "-C", "S@127.0.0.0/8 and m*", "test.ping")
                                .out())
                        .keySet())
                .containsExactlyInAnyOrder("m1", "m2", "m3");
        assertThat(json(brineHere("--out", "json", "--ipcidr", "127.0.0.1", "test.ping")
                                .out())
                        .keySet())
                .contains("m1", "m2", "m3");
        Run bad = brineHere("-S", "10.0.0/8", "test.ping");
        assertThat(bad.exit()).isEqualTo(2);
        assertThat(bad.err()).startsWith("brine: bad target: ");
    }

    @Test
    void nodegroupsOfTheMastersConfigAsInSalt() throws Exception {
        Run webs = brineHere("--out", "json", "-N", "webs", "test.ping");
        assertThat(webs.exit()).as(webs.err()).isZero();
        assertThat(json(webs.out()).keySet()).containsExactlyInAnyOrder("m1", "m2");
        // Inside -C, a nodegroup is one term: "and not m2" applies to all of it (it is expanded in parentheses).
        Run most = brineHere("--out", "json", "-C", "N@most and not m2", "test.ping");
        assertThat(most.exit()).as(most.err()).isZero();
        assertThat(json(most.out()).keySet()).containsExactlyInAnyOrder("m1", "m3");

        Run unknown = brineHere("-N", "nowhere", "test.ping");
        assertThat(unknown.exit()).isEqualTo(2);
        assertThat(unknown.err())
                .isEqualTo("brine: the master refused the job: bad target: unknown nodegroup" + " nowhere"
                        + System.lineSeparator());
        Run bad = brineHere("-C", "N@webs and", "test.ping");
        assertThat(bad.exit()).isEqualTo(2);
        assertThat(bad.err()).startsWith("brine: bad target: ");
    }

    @Test
    @SuppressWarnings("unchecked")
    void batchModeRunsOnNMinionsAtATime() throws Exception {
        Run run = brineHere("--out", "json", "-b", "1", "-L", "m1,m2,m3", "test.echo", "batched");
        assertThat(run.exit()).as(run.err()).isZero();
        assertThat(json(run.out())).isEqualTo(Map.of("m1", "batched", "m2", "batched", "m3", "batched"));
        Matcher batch = Pattern.compile("batch (\\d) of 3 \\(jid ([0-9]{20})\\): (m\\d)")
                .matcher(run.err());
        List<String> batches = new ArrayList<>();
        while (batch.find()) {
            batches.add(batch.group(3));
            // Each batch is a job of its own, for its minions only.
            Map<String, Object> job = json(brine("jobs", "show", batch.group(2), "-c", conf.toString(), "--out", "json")
                    .out());
            assertThat((List<String>) job.get("minions")).containsExactly(batch.group(3));
        }
        assertThat(batches).containsExactly("m1", "m2", "m3");
        assertThat(run.err()).contains("returned 3 of 3 targeted");

        Run percent = brineHere("--out", "json", "--batch", "50%", "-L", "m1,m2,m3", "test.ping");
        assertThat(percent.exit()).as(percent.err()).isZero();
        assertThat(percent.err())
                .contains("batch 1 of 2")
                .contains("batch 2 of 2")
                .doesNotContain("batch 3");
        assertThat(brineHere("-b", "0", "m*", "test.ping").exit()).isEqualTo(2);
    }

    @Test
    void argumentsAndKeyValueArgumentsReachTheFunctionTyped() throws Exception {
        Run run = brineHere("--out", "json", "-L", "m1", "test.arg", "one", "2", "flag=true", "name=x y");
        assertThat(run.exit()).as(run.err()).isZero();
        assertThat(json(run.out()))
                .isEqualTo(
                        Map.of("m1", Map.of("args", List.of("one", 2), "kwargs", Map.of("flag", true, "name", "x y"))));
    }

    @Test
    void aMinionThatDoesNotReturnInTimeIsNamedAndTheExitCodeIsOne() {
        Run run = brineHere("-t", "1", "-L", "m1,m2", "test.sleep", "3");
        assertThat(run.exit()).isEqualTo(1);
        assertThat(run.out()).isEmpty();
        assertThat(run.err()).contains("returned 0 of 2 targeted").contains("did not answer: m1, m2");
    }

    @Test
    void aStoppedMinionIsNamedAndTheExitCodeIsOne() throws Exception {
        MinionDaemon spare = fleet.minions.stream()
                .filter(m -> m.minion().id().equals("spare"))
                .findFirst()
                .orElseThrow();
        spare.close();
        ZmtpServerTransport transport =
                (ZmtpServerTransport) fleet.master.master().transport();
        await().until(() -> !transport.subscribedMinions().contains("spare"));

        // The master could not queue the job for spare: the CLI does not wait its timeout (an hour) for it.
        Run run = assertTimeoutPreemptively(WAIT, () -> brineHere("-t", "3600", "-L", "m1,spare", "test.ping"));
        assertThat(run.exit()).isEqualTo(1);
        assertThat(run.out()).isEqualTo("m1:\n    True\n");
        assertThat(run.err())
                .contains("returned 1 of 2 targeted")
                .contains("not connected: spare")
                .doesNotContain("did not answer");
    }

    @Test
    void manageSaysWhichAcceptedMinionsAnswerAsSaltsManageRunners() throws Exception {
        MinionDaemon spare = fleet.minions.stream()
                .filter(m -> m.minion().id().equals("spare"))
                .findFirst()
                .orElseThrow();
        spare.close(); // as aStoppedMinionIsNamedAndTheExitCodeIsOne does (either may run first)
        ZmtpServerTransport transport =
                (ZmtpServerTransport) fleet.master.master().transport();
        await().until(() -> !transport.subscribedMinions().contains("spare"));

        Run up = brineHere("manage", "up", "m*");
        assertThat(up.exit()).as(up.err()).isZero();
        assertThat(up.out()).isEqualTo("- m1\n- m2\n- m3\n");
        Run status = brineHere("manage", "status");
        assertThat(status.exit()).isEqualTo(1);
        assertThat(status.out()).isEqualTo("down:\n    - spare\nup:\n    - m1\n    - m2\n    - m3\n");
        Run down = brineHere("manage", "down", "--out", "json");
        assertThat(down.exit()).isEqualTo(1);
        assertThat(JSON.readValue(down.out(), List.class)).isEqualTo(List.of("spare"));
        assertThat(brineHere("manage", "sideways").exit()).isEqualTo(2);
    }

    // ---- the job cache ----

    @Test
    @SuppressWarnings("unchecked")
    void anAsyncJobPrintsItsJidAndJobsShowHasItsReturns() throws Exception {
        Run run = brineHere("--async", "-L", "m1,m2", "test.echo", "later");
        assertThat(run.exit()).as(run.err()).isZero();
        assertThat(run.out()).matches("[0-9]{20}\n");
        String jid = run.out().strip();

        await().until(() -> {
            Run show = brine("jobs", "show", jid, "-c", conf.toString(), "--out", "json");
            return show.exit() == 0 && ((Map<String, ?>) json(show.out()).get("returns")).size() == 2;
        });
        Map<String, Object> job = json(brine("jobs", "show", jid, "-c", conf.toString(), "--out", "json")
                .out());
        assertThat(job)
                .containsEntry("jid", jid)
                .containsEntry("fun", "test.echo")
                .containsEntry("minions", List.of("m1", "m2"))
                .containsEntry("missing", List.of());
        Map<String, Map<String, Object>> returns = (Map<String, Map<String, Object>>) job.get("returns");
        assertThat(returns.get("m1")).containsEntry("return", "later").containsEntry("success", true);
        assertThat(returns.get("m2")).containsEntry("return", "later");

        Run text = brine("jobs", "show", jid, "-c", conf.toString());
        assertThat(text.out()).contains("jid:       " + jid).contains("m1:\n    later\n");

        Run list = brine("jobs", "list", "-c", conf.toString());
        assertThat(list.exit()).isZero();
        assertThat(list.out().lines())
                .anyMatch(line ->
                        line.startsWith(jid + "  ") && line.contains("test.echo") && line.endsWith("(2 minions)"));
        Map<String, Object> listed = json(
                brine("jobs", "list", "-c", conf.toString(), "--out", "json").out());
        assertThat((List<Map<String, Object>>) listed.get("jobs")).anyMatch(j -> jid.equals(j.get("jid")));
    }

    @Test
    @SuppressWarnings("unchecked")
    void globalOptionsGoBeforeOrAfterTheJobsCommandsAndOutIsEverywhere() throws Exception {
        Run run = brineHere("--out", "json", "-L", "m1", "test.echo", "here");
        assertThat(run.exit()).as(run.err()).isZero();
        String jid = run.err().replaceAll("(?s).*\\(jid ([0-9]{20})\\).*", "$1");
        assertThat(jid).matches("[0-9]{20}");

        // -c before 'jobs' is the same -c (it was ignored, and /etc/brine read).
        Run before = brine("-c", conf.toString(), "jobs", "show", jid);
        assertThat(before.exit()).as(before.err()).isZero();
        assertThat(before.out()).contains("jid:       " + jid).contains("m1:\n    here\n");
        Map<String, Object> json = json(brine("-c", conf.toString(), "--out", "json", "jobs", "show", jid)
                .out());
        assertThat((Map<String, Object>) json.get("returns")).containsKey("m1");
        Map<String, Object> listed = json(
                brine("--out", "json", "jobs", "list", "-c", conf.toString()).out());
        assertThat((List<Map<String, Object>>) listed.get("jobs")).anyMatch(j -> jid.equals(j.get("jid")));
        // Salt's outputters: nested is brine's text, txt one "id: line" for each line of a return.
        Run nested = brine("jobs", "show", jid, "--out", "nested", "-c", conf.toString());
        assertThat(nested.exit()).as(nested.err()).isZero();
        assertThat(nested.out()).isEqualTo(before.out());
        Run txt = brine("jobs", "show", jid, "--out", "txt", "-c", conf.toString());
        assertThat(txt.exit()).as(txt.err()).isZero();
        assertThat(txt.out())
                .contains("jid:       " + jid)
                .contains("\nm1: here\n")
                .doesNotContain("    here");
        assertThat(brineHere("--out", "txt", "-L", "m1", "test.ping").out()).isEqualTo("m1: True\n");
        assertThat(brineHere("--out", "txt", "-L", "m1", "test.echo", "one\ntwo")
                        .out())
                .isEqualTo("m1: one\nm1: two\n");
        assertThat(brineHere("--out", "nested", "-L", "m1", "test.ping").out()).isEqualTo("m1:\n    True\n");
    }

    @Test
    void jobsShowTextPrintsTheReturnsOnStreamsLikeTheLaunchers() throws Exception {
        Run run = brineHere("--out", "json", "-L", "m1,m2", "test.echo", "shown");
        assertThat(run.exit()).as(run.err()).isZero();
        String jid = run.err().replaceAll("(?s).*\\(jid ([0-9]{20})\\).*", "$1");
        // As main() sets them up: auto-flush on println only, and what is not flushed when run returns is lost
        // (System.exit follows). The returns were print()ed and never flushed.
        ByteArrayOutputStream stdout = new ByteArrayOutputStream();
        int exit = BrineCli.run(
                new String[] {"jobs", "show", jid, "-c", conf.toString()},
                new PrintWriter(new OutputStreamWriter(stdout, StandardCharsets.UTF_8), true),
                new PrintWriter(new StringWriter(), true));
        assertThat(exit).isZero();
        assertThat(stdout.toString(StandardCharsets.UTF_8))
                .contains("jid:       " + jid)
                .contains("m1:\n    shown\n")
                .contains("m2:\n    shown\n");
    }

    @Test
    void listedIdsThatAreNotAcceptedMinionsAreNamedAndCountAsMissing() {
        Run run = brineHere("-L", "m1,ghost1,ghost2", "test.ping");
        assertThat(run.exit()).isEqualTo(1);
        assertThat(run.out()).isEqualTo("m1:\n    True\n");
        assertThat(run.err()).contains("not accepted minions: ghost1, ghost2").contains("returned 1 of 3 targeted");
        Run none = brineHere("-L", "ghost1", "test.ping");
        assertThat(none.exit()).isEqualTo(1);
        assertThat(none.err()).contains("not accepted minions: ghost1");
    }

    @Test
    void showJidAndVerboseSayWhichJobRan() {
        Run shown = brineHere("--show-jid", "-L", "m1", "test.ping");
        assertThat(shown.exit()).as(shown.err()).isZero();
        assertThat(shown.out()).matches("jid: [0-9]{20}\nm1:\n    True\n");
        Run verbose = brineHere("-v", "-L", "m1", "test.ping");
        assertThat(verbose.exit()).as(verbose.err()).isZero();
        assertThat(verbose.err()).containsPattern("Executing job with jid [0-9]{20}");
        assertThat(verbose.out()).isEqualTo("m1:\n    True\n");
    }

    @Test
    void jobsShowOfAnUnknownJidSaysSo() {
        Run run = brine("jobs", "show", "20000101000000000000", "-c", conf.toString());
        assertThat(run.exit()).isEqualTo(1);
        assertThat(run.err()).contains("no job 20000101000000000000");
    }

    // ---- user errors: one line, exit 2, no trace ----

    @Test
    void aBadTargetIsOneLineAndExitTwo() {
        for (String[] target :
                List.of(new String[] {"-E", "m[1"}, new String[] {"-C", "G@role:web and"}, new String[] {"-L", "M1"})) {
            Run run = brineHere(target[0], target[1], "test.ping");
            assertThat(run.exit()).as(String.join(" ", target)).isEqualTo(2);
            assertOneLineNoTrace(run);
            assertThat(run.err()).startsWith("brine: bad target: ");
        }
    }

    @Test
    void anUnknownOptionIsExitTwo() {
        Run run = brineHere("--frobnicate", "m*", "test.ping");
        assertThat(run.exit()).isEqualTo(2);
        assertThat(run.err())
                .contains("--frobnicate")
                .doesNotContain("Exception")
                .doesNotContain("\tat ");
        assertThat(run.out()).isEmpty();
    }

    @Test
    void aMissingTargetOrFunctionIsExitTwo() {
        for (String[] args : List.of(new String[] {}, new String[] {"m*"})) {
            Run run = brineHere(args);
            assertThat(run.exit()).isEqualTo(2);
            assertThat(run.err())
                    .startsWith("brine: missing ")
                    .contains("FUNCTION")
                    .doesNotContain("\tat ");
        }
    }

    @Test
    void aMissingMasterYamlIsExitTwoNamingTheFile() throws Exception {
        Path empty = Files.createDirectories(dir.resolve("empty-conf"));
        Run run = brine("-c", empty.toString(), "m*", "test.ping");
        assertThat(run.exit()).isEqualTo(2);
        assertThat(run.err()).contains(empty.resolve("master.yaml").toString()).doesNotContain("\tat ");
        assertThat(run.out()).isEmpty();
    }

    @Test
    void noMasterRunningIsExitTwoSayingSo() throws Exception {
        // Ports held (bound, never listening) for the whole test: connections to them are refused, and no other
        // process can start listening there meanwhile.
        try (Socket ret = boundNotListening();
                Socket publish = boundNotListening()) {
            Path nobody = masterYaml("conf-no-master", ret.getLocalPort(), publish.getLocalPort());
            Run run = brine("-c", nobody.toString(), "--connect-timeout", "2", "m*", "test.ping");
            assertThat(run.exit()).isEqualTo(2);
            assertOneLineNoTrace(run);
            assertThat(run.err()).contains("no answer from the master");
        }
    }

    private static Socket boundNotListening() throws IOException {
        Socket socket = new Socket();
        socket.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0));
        return socket;
    }
}
