package io.brine.protocol.grant;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.brine.protocol.crypto.Fingerprints;
import io.brine.protocol.testing.TestKeys;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.Base64;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

class GrantsTest {

    private static final Instant T0 = Instant.parse("2026-11-22T10:00:00Z");

    static ProvisioningGrant grant(String id, int hostKey) {
        return new ProvisioningGrant(
                id,
                Fingerprints.of(TestKeys.pair(hostKey).getPublic()),
                T0,
                T0.plusSeconds(3600),
                Map.of("role", "web"),
                Grants.newNonce());
    }

    @Test
    void aSignedGrantParsesBackAndVerifiesWithTheProvisionerKeyOnly() throws Exception {
        ProvisioningGrant grant = grant("web1.example.com", 1);
        byte[] bytes = Grants.sign(grant, TestKeys.pair(0));

        Grants.SignedGrant parsed = Grants.parse(bytes);
        assertThat(parsed.grant()).isEqualTo(grant);
        assertThat(parsed.signer()).isEqualTo(Fingerprints.of(TestKeys.pair(0).getPublic()));
        assertThat(parsed.verify(TestKeys.pair(0).getPublic())).isTrue();
        assertThat(parsed.verify(TestKeys.pair(2).getPublic())).isFalse();
        assertThat(parsed.digest()).hasSize(64);
        assertThat(new String(bytes, StandardCharsets.UTF_8))
                .startsWith("{\"brine_grant\":1,")
                .endsWith("}\n");
    }

    @Test
    void aChangedPayloadNoLongerVerifies() throws Exception {
        byte[] bytes = Grants.sign(grant("web1", 1), TestKeys.pair(0));
        String text = new String(bytes, StandardCharsets.UTF_8);
        Grants.SignedGrant original = Grants.parse(bytes);
        String payload = new String(original.payload(), StandardCharsets.UTF_8).replace("\"web1\"", "\"web2\"");
        String tampered = text.replace(
                Base64.getEncoder().encodeToString(original.payload()),
                Base64.getEncoder().encodeToString(payload.getBytes(StandardCharsets.UTF_8)));

        Grants.SignedGrant parsed = Grants.parse(tampered.getBytes(StandardCharsets.UTF_8));
        assertThat(parsed.grant().id()).isEqualTo("web2");
        assertThat(parsed.verify(TestKeys.pair(0).getPublic())).isFalse();
    }

    @Test
    void onlyTheCanonicalBase64IsAccepted() throws Exception {
        byte[] bytes = Grants.sign(grant("web1", 1), TestKeys.pair(0));
        String text = new String(bytes, StandardCharsets.UTF_8);
        Grants.SignedGrant original = Grants.parse(bytes);
        String signature = Base64.getEncoder().encodeToString(original.signature());
        assertThat(signature).endsWith("=");
        String unpadded = text.replace(signature, signature.replace("=", ""));

        assertThatThrownBy(() -> Grants.parse(unpadded.getBytes(StandardCharsets.UTF_8)))
                .isInstanceOf(GrantException.class)
                .hasMessageContaining("signature: not canonical base64");
    }

    @ParameterizedTest
    @ValueSource(
            strings = {
                "",
                "[]",
                "{\"brine_grant\":2,\"signer\":\"x\",\"payload\":\"e30=\",\"signature\":\"AA==\"}",
                "{\"brine_grant\":1,\"signer\":\"not-a-fingerprint\",\"payload\":\"e30=\",\"signature\":\"AA==\"}",
                "{\"brine_grant\":1,\"brine_grant\":1}",
                "{\"brine_grant\":1,\"extra\":1}",
                "{} {}",
            })
    void malformedOuterDocumentsAreRefused(String text) {
        assertThatThrownBy(() -> Grants.parse(text.getBytes(StandardCharsets.UTF_8)))
                .isInstanceOf(GrantException.class);
    }

    @ParameterizedTest
    @ValueSource(
            strings = {
                "{}",
                "{\"version\":1,\"id\":\"Web1\",\"fingerprint\":\"%s\",\"not_before\":1,\"not_after\":2,\"nonce\":\"%s\"}",
                "{\"version\":1,\"id\":\"web1\",\"fingerprint\":\"ab\",\"not_before\":1,\"not_after\":2,\"nonce\":\"%2$s\"}",
                "{\"version\":1,\"id\":\"web1\",\"fingerprint\":\"%s\",\"not_before\":2,\"not_after\":2,\"nonce\":\"%s\"}",
                "{\"version\":1,\"id\":\"web1\",\"fingerprint\":\"%s\",\"not_before\":0,\"not_after\":9999999,"
                        + "\"nonce\":\"%s\"}",
                "{\"version\":1,\"id\":\"web1\",\"fingerprint\":\"%s\",\"not_before\":1,\"not_after\":2,\"nonce\":\"abc\"}",
                "{\"version\":1,\"id\":\"web1\",\"fingerprint\":\"%s\",\"not_before\":1,\"not_after\":2,\"nonce\":\"%s\","
                        + "\"class\":{\"a:b\":\"x\"}}",
                "{\"version\":1,\"id\":\"web1\",\"fingerprint\":\"%s\",\"not_before\":1,\"not_after\":2,\"nonce\":\"%s\","
                        + "\"class\":{\"a\":1}}",
                "{\"version\":1,\"id\":\"web1\",\"fingerprint\":\"%s\",\"not_before\":1.5,\"not_after\":2,"
                        + "\"nonce\":\"%s\"}",
                "{\"version\":1,\"id\":\"web1\",\"fingerprint\":\"%s\",\"not_before\":1,\"not_after\":2,\"nonce\":\"%s\","
                        + "\"admin\":true}",
            })
    void payloadsThatBreakARuleAreRefused(String template) {
        String payload =
                String.format(template, Fingerprints.of(TestKeys.pair(1).getPublic()), Grants.newNonce());
        String outer = "{\"brine_grant\":1,\"signer\":\""
                + Fingerprints.of(TestKeys.pair(0).getPublic())
                + "\",\"payload\":\"" + Base64.getEncoder().encodeToString(payload.getBytes(StandardCharsets.UTF_8))
                + "\",\"signature\":\"AAAA\"}";
        assertThatThrownBy(() -> Grants.parse(outer.getBytes(StandardCharsets.UTF_8)))
                .isInstanceOf(GrantException.class);
    }

    @Test
    void aGrantLongerThanThirtyDaysCannotBeMade() {
        assertThatThrownBy(() -> new ProvisioningGrant(
                        "web1",
                        Fingerprints.of(TestKeys.pair(1).getPublic()),
                        T0,
                        T0.plusSeconds(ProvisioningGrant.MAX_LIFETIME_SECONDS + 1),
                        Map.of(),
                        Grants.newNonce()))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("30 days");
    }

    @Test
    void anOversizedGrantIsRefusedBeforeParsing() {
        assertThatThrownBy(() -> Grants.parse(new byte[Grants.MAX_BYTES + 1]))
                .isInstanceOf(GrantException.class)
                .hasMessageContaining("larger than");
    }
}
