package io.brine.master.auth;

import static org.assertj.core.api.Assertions.assertThat;

import io.brine.daemon.config.MasterConfig;
import io.brine.master.WiredMaster;
import io.brine.protocol.message.AuthReply;
import io.brine.protocol.message.AuthStatus;
import io.brine.store.keys.KeyListing;
import io.brine.store.keys.KeyState;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.function.UnaryOperator;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * reserved_ids over a real connection: a raw auth request for a reserved id is answered with a signed refusal bound to
 * its nonce, audited, and nothing is filed under that id, even with auto_accept on; other ids are served as before.
 */
class ReservedIdsAuthTest {

    @TempDir
    Path dir;

    WiredMaster master;

    @AfterEach
    void stop() {
        if (master != null) {
            master.close();
        }
    }

    private void start(UnaryOperator<MasterConfig.Acceptance.Builder> acceptance) throws Exception {
        master = WiredMaster.start(
                dir,
                config -> config.acceptance(acceptance
                        .apply(MasterConfig.Acceptance.builder().autoAccept(true))
                        .build()));
    }

    @Test
    void aReservedIdIsRefusedSignedAndNothingIsFiledWhileANormalIdIsAccepted() throws Exception {
        start(UnaryOperator.identity());

        for (String id : List.of("con.example.com", "master", "nul", "com1")) {
            AuthReply reply = ask(id, 2);
            assertThat(reply.status()).as(id).isEqualTo(AuthStatus.REFUSED);
            assertThat(reply.reason()).as(id).contains("id " + id + " is reserved (reserved_ids entry");
        }
        assertThat(ask("web1", 3).status()).isEqualTo(AuthStatus.ACCEPTED);

        KeyListing listing = master.keyStore().list();
        for (KeyState state : KeyState.values()) {
            assertThat(listing.ids(state))
                    .as(state.dirName())
                    .doesNotContain("con.example.com", "master", "nul", "com1");
        }
        assertThat(listing.ids(KeyState.ACCEPTED)).containsExactly("web1");
        String audit = Files.readString(master.config().auditLog());
        assertThat(audit)
                .contains("con.example.com")
                .contains("is reserved (reserved_ids entry con.*)")
                .contains("is reserved (reserved_ids entry master)");
    }

    @Test
    void anEmptyListAllowsThem() throws Exception {
        start(acceptance -> acceptance.reservedIds(List.of()));

        assertThat(ask("con.example.com", 2).status()).isEqualTo(AuthStatus.ACCEPTED);
        assertThat(ask("master", 3).status()).isEqualTo(AuthStatus.ACCEPTED);
    }

    @Test
    void theListIsConfigurable() throws Exception {
        start(acceptance -> acceptance.reservedIds(List.of("db.*")));

        assertThat(ask("db.example.com", 2).status()).isEqualTo(AuthStatus.REFUSED);
        assertThat(ask("master", 3).status()).isEqualTo(AuthStatus.ACCEPTED);
    }

    /** One raw auth request on a connection of its own, answered signed and bound to its nonce. */
    private AuthReply ask(String id, int key) throws Exception {
        byte[] nonce = WiredMaster.nonce();
        return AuthRepliesTest.ask(master, WiredMaster.authRequest(id, key, nonce), nonce);
    }
}
