package io.brine.protocol.crypto;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.lang.reflect.Array;
import java.lang.reflect.Field;
import java.lang.reflect.Modifier;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Set;
import javax.crypto.SecretKey;
import org.junit.jupiter.api.Test;

/**
 * {@link SessionKey#wipe()} is true to its word: after it, nothing the session key reaches holds the key's bytes
 * (no JDK key object with a copy of its own), the key it hands the JCE is destroyed, and sealing or opening with it
 * fails with a reason instead of using the key.
 */
class SessionKeyTest {

    private static final byte[] AAD = "context".getBytes(StandardCharsets.US_ASCII);

    @Test
    void afterTheWipeNothingReachableFromTheKeyHoldsItsBytesAndUsingItFails() throws Exception {
        byte[] raw = new byte[SessionKey.LENGTH];
        Arrays.fill(raw, (byte) 0x5a);
        SessionKey key = SessionKey.of(raw);
        byte[] box = Aead.seal(key, AAD, "hello".getBytes(StandardCharsets.US_ASCII));
        SecretKey jce = key.secretKey();
        assertThat(jce.getEncoded()).isEqualTo(raw);
        assertThat(jce.isDestroyed()).isFalse();

        key.wipe();

        assertThat(jce.isDestroyed()).isTrue();
        assertThatThrownBy(jce::getEncoded)
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("wiped");
        assertThatThrownBy(key::bytes).isInstanceOf(IllegalStateException.class).hasMessageContaining("wiped");
        List<String> holding = new ArrayList<>();
        walk(key, "key", raw, Collections.newSetFromMap(new IdentityHashMap<>()), holding);
        assertThat(holding).as("objects reachable from the wiped key").isEmpty();
        assertThatThrownBy(() -> Aead.seal(key, AAD, new byte[1]))
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("wiped session key");
        assertThatThrownBy(() -> Aead.open(key, AAD, box))
                .isInstanceOf(CryptoException.class)
                .hasMessageContaining("wiped session key");
    }

    @Test
    void destroyingTheJceKeyWipesTheSessionKey() throws Exception {
        SessionKey key = SessionKey.random();
        key.secretKey().destroy();
        assertThat(key.secretKey().isDestroyed()).isTrue();
        assertThatThrownBy(key::bytes).isInstanceOf(IllegalStateException.class);
    }

    /**
     * Walks the fields of brine's own objects from {@code at}; a byte array that still holds {@code secret} (or any
     * object of another library, which could hold a copy: the JDK's SecretKeySpec does) is recorded in {@code found}.
     */
    private static void walk(Object at, String path, byte[] secret, Set<Object> seen, List<String> found)
            throws IllegalAccessException {
        if (at == null || !seen.add(at)) {
            return;
        }
        Class<?> type = at.getClass();
        if (type == byte[].class) {
            if (Arrays.equals((byte[]) at, secret)) {
                found.add(path + " holds the key's bytes");
            }
            return;
        }
        if (type.isArray()) {
            if (!type.getComponentType().isPrimitive()) {
                for (int i = 0; i < Array.getLength(at); i++) {
                    walk(Array.get(at, i), path + "[" + i + "]", secret, seen, found);
                }
            }
            return;
        }
        if (type.isEnum() || at instanceof String || at instanceof Boolean || at instanceof Number) {
            return;
        }
        if (!type.getName().startsWith("io.brine.")) {
            found.add(path + " is a " + type.getName() + ", which may hold a copy");
            return;
        }
        for (Class<?> c = type; c != null && c != Object.class; c = c.getSuperclass()) {
            for (Field field : c.getDeclaredFields()) {
                if (Modifier.isStatic(field.getModifiers()) || field.getType().isPrimitive()) {
                    continue;
                }
                field.setAccessible(true);
                walk(field.get(at), path + "." + field.getName(), secret, seen, found);
            }
        }
    }
}
