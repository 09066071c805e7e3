package io.brine.it;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.fail;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.ObjectMapper;
import io.brine.daemon.config.MasterConfig;
import io.brine.daemon.config.MinionConfig;
import io.brine.minion.MinionDaemon;
import io.brine.minion.MinionState;
import io.brine.protocol.crypto.Fingerprints;
import io.brine.protocol.testing.TestKeys;
import io.brine.store.api.ApiTokens;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.openqa.selenium.By;
import org.openqa.selenium.JavascriptExecutor;
import org.openqa.selenium.NoAlertPresentException;
import org.openqa.selenium.OutputType;
import org.openqa.selenium.WebDriverException;
import org.openqa.selenium.WebElement;
import org.openqa.selenium.chrome.ChromeDriver;
import org.openqa.selenium.chrome.ChromeDriverService;
import org.openqa.selenium.chrome.ChromeOptions;

/**
 * The web console in a real browser (Debian's headless Chromium through chromium-driver) against a master and real
 * minions: an admin sees a minion's key appear pending while the page is open, accepts it after checking its
 * fingerprint, runs test.ping and sees the return; a return full of markup and script, seen live in the event view
 * and then in its job, is shown as text and runs nothing; a revoked token is logged out. Screenshots of each page go to target/console-screenshots.
 */
class ConsoleIT {

    private static final Path CHROMIUM = Path.of("/usr/bin/chromium");
    private static final Path CHROMEDRIVER = Path.of("/usr/bin/chromedriver");
    private static final Path SCREENSHOTS = Path.of("target", "console-screenshots");
    /** A return and an event a hostile minion could send: every trick, as text. */
    private static final String MARKUP = "<img src=x onerror=\"window.pwned=1;alert(1)\"><script>window.pwned=2;"
            + "alert(2)</script><b id=\"injected\">bold</b>";

    private static final ObjectMapper JSON = new ObjectMapper();

    static ChromeDriver browser;

    @TempDir
    Path dir;

    Fleet fleet;
    String token;

    @BeforeAll
    static void startBrowser(@TempDir Path profile) throws IOException {
        if (!Files.isExecutable(CHROMIUM) || !Files.isExecutable(CHROMEDRIVER)) {
            fail("ConsoleIT needs Debian's chromium and chromium-driver (" + CHROMIUM + ", " + CHROMEDRIVER + "):"
                    + " run .ci/install-test-deps as root");
        }
        ChromeOptions options = new ChromeOptions().setBinary(CHROMIUM.toFile());
        options.addArguments(
                "--headless=new",
                "--disable-gpu",
                "--disable-dev-shm-usage",
                "--window-size=1280,900",
                "--user-data-dir=" + profile,
                "--no-first-run",
                "--disable-extensions");
        if ("root".equals(System.getProperty("user.name"))) {
            options.addArguments("--no-sandbox"); // Chromium refuses to run as root with its sandbox
        }
        Files.createDirectories(SCREENSHOTS);
        ChromeDriverService service = new ChromeDriverService.Builder()
                .usingDriverExecutable(CHROMEDRIVER.toFile())
                .usingAnyFreePort()
                .withLogFile(SCREENSHOTS.resolve("chromedriver.log").toFile())
                .build();
        try {
            browser = new ChromeDriver(service, options);
        } catch (WebDriverException e) {
            fail(
                    "cannot start headless Chromium (" + CHROMIUM + " through " + CHROMEDRIVER + "): "
                            + e.getMessage().lines().findFirst().orElse(""),
                    e);
        }
    }

    @AfterAll
    static void stopBrowser() {
        if (browser != null) {
            browser.quit();
        }
    }

    @AfterEach
    void stop() {
        if (fleet != null) {
            fleet.close();
        }
    }

    void startMaster(boolean autoAccept) throws Exception {
        fleet = new Fleet(dir);
        fleet.startMaster(b -> {
            b.api(MasterConfig.Api.loopback(0));
            return autoAccept ? b.acceptance(Fleet.autoAccept()) : b;
        });
        token = ApiTokens.create(
                        fleet.masterConfig.pkiDir(),
                        "ops",
                        List.of("*"),
                        List.of("test.*"),
                        true,
                        Duration.ofHours(1),
                        Clock.systemUTC())
                .token();
    }

    void logIn() {
        browser.get("http://127.0.0.1:" + fleet.master.apiPort() + "/");
        browser.executeScript("sessionStorage.clear()");
        browser.navigate().refresh();
        await().until(() -> browser.findElement(By.id("login")).isDisplayed());
        browser.findElement(By.id("token")).sendKeys(token);
        browser.findElement(By.id("login-button")).click();
        await().until(() -> browser.findElement(By.id("view")).isDisplayed());
        assertThat(browser.getCurrentUrl()).doesNotContain(token);
    }

    void open(String page) {
        browser.executeScript("location.hash = arguments[0]", page);
    }

    /** The text element {@code id} shows now, or "" (read in one step: the pages replace what they refresh). */
    String text(String id) {
        return String.valueOf(browser.executeScript(
                "const e = document.getElementById(arguments[0]);" + " return e ? e.innerText : ''", id));
    }

    static void screenshot(String name) throws IOException {
        Files.write(SCREENSHOTS.resolve(name + ".png"), browser.getScreenshotAs(OutputType.BYTES));
    }

    void runJob(String target, String fun) {
        open("jobs");
        WebElement targetField =
                await().ignoreExceptions().until(() -> browser.findElement(By.id("job-target")), field -> true);
        targetField.clear();
        targetField.sendKeys(target);
        browser.findElement(By.id("job-fun")).clear();
        browser.findElement(By.id("job-fun")).sendKeys(fun);
        browser.findElement(By.id("publish-button")).click();
    }

    @Test
    void aMinionAppearsPendingIsAcceptedAfterItsFingerprintIsCheckedAndPinged() throws Exception {
        startMaster(false);
        logIn();
        await().until(() -> text("pending-list").contains("No key is pending"));

        // Asking again every second while pending, so that it sees the accept soon.
        MinionDaemon web1 = fleet.startMinion(
                "web1",
                100,
                b -> b.auth(new MinionConfig.Auth(
                        Duration.ofSeconds(1), Duration.ofSeconds(1), false, Duration.ofSeconds(15))));
        String fingerprint = Fingerprints.of(TestKeys.pair(100).getPublic());
        await().until(() -> text("pending-keys").contains("web1"));
        assertThat(text("pending-keys")).contains(fingerprint);
        screenshot("pending");

        browser.findElement(By.cssSelector("#pending-keys button[data-verb=accept]"))
                .click();
        assertThat(text("confirm")).contains("web1");
        assertThat(text("confirm-fingerprint")).isEqualTo(fingerprint);
        screenshot("pending-confirm");
        assertThat(fleet.acceptedIds()).isEmpty(); // nothing happens before the confirm
        browser.findElement(By.id("confirm-change")).click();
        await().until(() -> text("change-result").contains("web1: accepted"));
        Fleet.awaitState(web1, MinionState.ACCEPTED);
        await().until(() -> text("pending-list").contains("No key is pending"));

        open("fleet");
        await().until(() -> text("up-count").equals("1") && text("down-count").equals("0"));
        screenshot("fleet");

        runJob("web1", "test.ping");
        await().until(() ->
                browser.findElements(By.cssSelector("#job-detail .return")).size() == 1
                        && text("job-detail").contains("1 of 1 returned"));
        WebElement ret = browser.findElement(By.cssSelector("#job-detail .return"));
        assertThat(ret.findElement(By.cssSelector(".id")).getText()).isEqualTo("web1");
        assertThat(ret.findElement(By.cssSelector("pre.value")).getText()).isEqualTo("true");
        await().until(() -> text("jobs").contains("test.ping"));
        screenshot("jobs");

        open("keys");
        await().until(() -> text("all-keys").contains("web1"));
        assertThat(text("all-keys")).contains("accepted", fingerprint);
        screenshot("keys");
    }

    @Test
    void markupAndScriptInAReturnAreShownAsTextAndRunNothing() throws Exception {
        startMaster(true);
        MinionDaemon web2 = fleet.startMinion("web2");
        Fleet.awaitState(web2, MinionState.ACCEPTED);
        logIn();
        open("events");
        await().until(() -> text("event-state").equals("live"));

        // Long enough to be cut (at 2,000 characters) with a way to see all.
        String echoed = MARKUP + " " + "x".repeat(2500);
        String jid = publish("web2", "test.echo", echoed);
        // The event view shows the return live (an event holds the master's words, not the return itself).
        await().until(() -> text("event-list").contains("brine/job/" + jid + "/ret/web2"));
        screenshot("events");
        assertNothingRan();

        open("jobs");
        await().until(() -> text("jobs").contains(jid));
        browser.findElement(By.linkText(jid)).click();
        await().until(() -> text("job-detail").contains("1 of 1 returned"));
        assertThat(shownReturn()).isEqualTo(echoed.substring(0, 2000)).startsWith(MARKUP);
        screenshot("jobs-markup");
        browser.findElement(By.cssSelector("#job-detail .return .show-all")).click();
        assertThat(shownReturn()).isEqualTo(echoed);
        assertNothingRan();
    }

    /** The text of the job's one return as the page shows it. */
    String shownReturn() {
        return String.valueOf(
                browser.executeScript("return document.querySelector('#job-detail .return pre.value').textContent"));
    }

    /** Publishes {@code fun} with one argument through the API, as a pipeline would; answers the jid. */
    String publish(String target, String fun, String arg) throws Exception {
        Map<String, Object> job = Map.of("target", target, "fun", fun, "args", List.of(arg));
        HttpResponse<String> response = HttpClient.newHttpClient()
                .send(
                        HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + fleet.master.apiPort() + "/api/jobs"))
                                .header("Authorization", "Bearer " + token)
                                .header("Content-Type", "application/json")
                                .POST(HttpRequest.BodyPublishers.ofString(JSON.writeValueAsString(job)))
                                .build(),
                        HttpResponse.BodyHandlers.ofString());
        assertThat(response.statusCode()).as(response.body()).isEqualTo(202);
        return JSON.readTree(response.body()).get("jid").asText();
    }

    /** No alert, no element the markup would have made, nothing its scripts would have set. */
    void assertNothingRan() {
        assertThatThrownBy(() -> browser.switchTo().alert()).isInstanceOf(NoAlertPresentException.class);
        JavascriptExecutor page = browser;
        assertThat(page.executeScript("return window.pwned === undefined")).isEqualTo(true);
        assertThat(page.executeScript("return document.querySelectorAll('img, b#injected, main script').length"))
                .isEqualTo(0L);
        assertThat(page.executeScript("return document.scripts.length")).isEqualTo(1L); // the console's module
    }

    @Test
    void aRevokedTokenIsLoggedOutWithAMessage() throws Exception {
        startMaster(false);
        logIn();
        await().until(() -> text("pending-list").contains("No key is pending"));
        assertThat(ApiTokens.revoke(fleet.masterConfig.pkiDir(), "ops")).isTrue();
        // The pending page asks every 2 s: its next request is refused, and the console forgets the token.
        await().until(() -> browser.findElement(By.id("login")).isDisplayed());
        assertThat(text("notice")).contains("The master refused the token", "Log in again");
        assertThat(browser.findElement(By.id("view")).isDisplayed()).isFalse();
        assertThat(browser.executeScript("return sessionStorage.length")).isEqualTo(0L);
        screenshot("logged-out");
    }
}
