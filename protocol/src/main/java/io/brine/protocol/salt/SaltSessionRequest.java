package io.brine.protocol.salt;

import io.brine.protocol.codec.MalformedException;
import io.brine.protocol.crypto.CryptoException;

/**
 * The decrypted load of an {@link SaltRequest.Encrypted} request: what every session request carries
 * ({@code _package_load} in salt/channel/client.py adds {@code nonce}, {@code ts}, {@code tok} and {@code id}) and
 * the command itself. {@code tok} is the minion's X9.31 signature of {@code salt}; Salt's master checks it against
 * the stored key ({@code validate_token} in salt/channel/server.py), and so may brine, although the session key
 * already authenticates the minion.
 */
public record SaltSessionRequest(
        String id, String nonce, long ts, byte[] tok, SaltCommand command, SaltValue.Map load) {

    static final int MAX_TOK_BYTES = 1024;

    public SaltSessionRequest {
        tok = tok.clone();
    }

    @Override
    public byte[] tok() {
        return tok.clone();
    }

    /**
     * Decrypts {@code request} with {@code session} (the key of the minion the envelope names) and reads its load.
     * The load's {@code id} must be the envelope's, as Salt checks for version 3 (salt/channel/server.py,
     * {@code handle_message}).
     */
    public static SaltSessionRequest open(SaltRequest.Encrypted request, Crypticle session, SaltLimits limits)
            throws CryptoException, MalformedException {
        SaltValue.Map load = SaltFields.asMap(session.loads(request.load(), null, limits), "load");
        SaltSessionRequest opened = decode(load);
        if (!opened.id().equals(request.id())) {
            throw new MalformedException("id: the load's id is not the envelope's");
        }
        return opened;
    }

    static SaltSessionRequest decode(SaltValue.Map load) throws MalformedException {
        return new SaltSessionRequest(
                SaltFields.text(load, "id", SaltAuthRequest.MAX_ID_BYTES),
                SaltFields.nonce(load, "nonce"),
                SaltFields.integer(load, "ts"),
                SaltFields.bytes(load, "tok", MAX_TOK_BYTES),
                SaltCommand.decode(load),
                load);
    }

    /** Seals a load as a minion does (tests and the benchmark's simulated Salt minions). */
    public static byte[] seal(
            Crypticle session, SaltValue.Map commandFields, String id, String nonce, long ts, byte[] tok) {
        SaltValue.Builder b = SaltValue.Map.builder();
        commandFields.entries().forEach(e -> b.put(e.key().text().orElseThrow(), e.value()));
        b.put("nonce", nonce).put("ts", ts).put("tok", tok).put("id", id);
        return session.dumps(b.build(), null);
    }

    @Override
    public String toString() {
        return "SaltSessionRequest[id=" + id + ", cmd=" + command.cmd() + ", ts=" + ts + "]";
    }
}
