package io.brine.it;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.brine.daemon.config.MasterConfig;
import io.brine.daemon.config.MinionConfig;
import io.brine.minion.MinionDaemon;
import io.brine.minion.MinionState;
import io.brine.store.api.ApiTokens;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.net.Socket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A pipeline's day through the HTTP API, against a master and a real minion: the minion's key appears pending, is
 * accepted with the fingerprint listed, a test.ping is published and waited for, its return seen in the job and in
 * the event stream.
 */
class ApiIT {

    private static final ObjectMapper JSON = new ObjectMapper();

    @TempDir
    Path dir;

    Fleet fleet;
    final HttpClient http = HttpClient.newHttpClient();
    String token;

    @AfterEach
    void stop() {
        fleet.close();
    }

    JsonNode call(String method, String path, String body, int expected) throws Exception {
        HttpRequest.Builder request = HttpRequest.newBuilder(
                        URI.create("http://127.0.0.1:" + fleet.master.apiPort() + path))
                .header("Authorization", "Bearer " + token)
                .timeout(Duration.ofMinutes(2));
        if (body != null) {
            request.header("Content-Type", "application/json");
        }
        request.method(
                method, body == null ? HttpRequest.BodyPublishers.noBody() : HttpRequest.BodyPublishers.ofString(body));
        HttpResponse<String> response = http.send(request.build(), HttpResponse.BodyHandlers.ofString());
        assertThat(response.statusCode()).as(response.body()).isEqualTo(expected);
        return JSON.readTree(response.body());
    }

    @Test
    void aPendingMinionIsAcceptedPingedAndItsReturnSeen() throws Exception {
        fleet = new Fleet(dir);
        fleet.startMaster(b -> b.api(MasterConfig.Api.loopback(0)));
        token = ApiTokens.create(
                        fleet.masterConfig.pkiDir(),
                        "ops",
                        List.of("web*"),
                        List.of("test.*"),
                        true,
                        Duration.ofHours(1),
                        Clock.systemUTC())
                .token();
        try (Socket events = new Socket("127.0.0.1", fleet.master.apiPort())) {
            events.setSoTimeout((int) TimeUnit.MINUTES.toMillis(2));
            events.getOutputStream()
                    .write(("GET /api/events?tag=brine/job/* HTTP/1.1\r\nHost: x\r\n" + "Authorization: Bearer " + token
                                    + "\r\n\r\n")
                            .getBytes(StandardCharsets.US_ASCII));
            BufferedReader stream =
                    new BufferedReader(new InputStreamReader(events.getInputStream(), StandardCharsets.UTF_8));
            String line;
            while ((line = stream.readLine()) != null && !line.endsWith(": subscribed")) {
                // the head
            }

            // Asking again every second while pending, so that it sees the accept soon.
            MinionDaemon web1 = fleet.startMinion(
                    "web1",
                    b -> b.auth(new MinionConfig.Auth(
                            Duration.ofSeconds(1), Duration.ofSeconds(1), false, Duration.ofSeconds(15))));
            await().until(() -> web1.minion().state() == MinionState.PENDING);
            JsonNode pending = call("GET", "/api/keys?state=pending", null, 200).get("keys");
            assertThat(pending).hasSize(1);
            String fingerprint = pending.get(0).get("fingerprint").asText();
            call("POST", "/api/keys/web1/accept", "{\"fingerprint\": \"" + fingerprint + "\"}", 200);
            Fleet.awaitState(web1, MinionState.ACCEPTED);
            await().until(() ->
                    call("GET", "/api/minions", null, 200).get("up").toString().contains("web1"));

            String jid = call("POST", "/api/jobs", "{\"target\": \"web1\", \"fun\": \"test.ping\"}", 202)
                    .get("jid")
                    .asText();
            JsonNode job = call("GET", "/api/jobs/" + jid + "?wait=120", null, 200);
            assertThat(job.get("returns").get("web1").get("return").asBoolean()).isTrue();
            assertThat(job.get("missing")).isEmpty();

            String returned = null;
            while (returned == null && (line = stream.readLine()) != null) {
                if (line.startsWith("data: ") && line.contains("/ret/web1")) {
                    returned = line;
                }
            }
            assertThat(returned).contains(jid, "test.ping");

            // Two more minions, then the job in batches of 2 of the 3 that answer the master's test.ping.
            for (String id : List.of("web2", "web3")) {
                MinionDaemon minion = fleet.startMinion(
                        id,
                        b -> b.auth(new MinionConfig.Auth(
                                Duration.ofSeconds(1), Duration.ofSeconds(1), false, Duration.ofSeconds(15))));
                await().until(() -> minion.minion().state() == MinionState.PENDING);
                String seen = call("GET", "/api/keys/" + id, null, 200)
                        .get("keys")
                        .get(0)
                        .get("fingerprint")
                        .asText();
                call("POST", "/api/keys/" + id + "/accept", "{\"fingerprint\": \"" + seen + "\"}", 200);
                Fleet.awaitState(minion, MinionState.ACCEPTED);
            }
            await().until(() -> call("GET", "/api/minions", null, 200).get("up").size() == 3);
            String batch = call(
                            "POST",
                            "/api/jobs",
                            "{\"target\": \"web*\", \"fun\": \"test.echo\"," + " \"args\": [\"hi\"], \"batch\": \"2\"}",
                            202)
                    .get("batch_id")
                    .asText();
            await().until(() -> call("GET", "/api/jobs/batches/" + batch, null, 200)
                    .get("state")
                    .asText()
                    .equals("done"));
            JsonNode run = call("GET", "/api/jobs/batches/" + batch, null, 200);
            assertThat(run.get("answered").toString()).isEqualTo("[\"web1\",\"web2\",\"web3\"]");
            assertThat(run.get("batches")).hasSize(2);
            assertThat(run.get("batches").get(0).get("minions").toString()).isEqualTo("[\"web1\",\"web2\"]");
            assertThat(run.get("batches").get(1).get("returned").toString()).isEqualTo("[\"web3\"]");
            JsonNode second = call(
                    "GET", "/api/jobs/" + run.get("batches").get(1).get("jid").asText(), null, 200);
            assertThat(second.get("returns").get("web3").get("return").asText()).isEqualTo("hi");
        }
    }
}
