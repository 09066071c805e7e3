package io.brine.store.keys;

import io.brine.daemon.files.AtomicFiles;
import io.brine.protocol.codec.MasterSuccessions;
import io.brine.protocol.crypto.Fingerprints;
import io.brine.protocol.crypto.KeyFormatException;
import io.brine.protocol.crypto.Pem;
import io.brine.protocol.crypto.Rsa;
import io.brine.protocol.crypto.RsaKeys;
import io.brine.protocol.salt.SaltPubkeySignature;
import io.brine.protocol.salt.SaltRsa;
import io.brine.store.audit.AuditEvent;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFileAttributes;
import java.security.GeneralSecurityException;
import java.security.KeyFactory;
import java.security.KeyPair;
import java.security.PrivateKey;
import java.security.interfaces.RSAPublicKey;
import java.security.spec.X509EncodedKeySpec;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.Arrays;
import java.util.Base64;
import java.util.EnumMap;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Optional;

/**
 * A master key rotation signed offline in two steps (README "Master key rotation"), so that the master signing key
 * never comes to the master's machine: {@link #prepare} writes the new key, pending and not in force ({@code
 * master.pem.pending}, 0400), and the request to sign ({@code master_sign.request}); {@link #sign}, on the machine
 * that holds the signing key, signs the request's succession record and the new key's Salt {@code pub_sig}; {@link
 * #complete} checks that signature against {@code master_sign.pub} and the pending key, then puts the key in force as
 * {@link MasterKeyRotation#rotate} does. Both files are text, one {@code name: value} a line. The caller holds the
 * store lock for the steps in {@code pki_dir}.
 */
public final class OfflineMasterSigning {

    public static final String PENDING_FILE = "master.pem.pending";
    public static final String REQUEST_FILE = "master_sign.request";
    /** The request to sign the key in force, without a rotation ({@link #prepareKeySignature}). */
    public static final String KEY_REQUEST_FILE = "master_pubkey_signature.request";

    static final String REQUEST_HEADER = "brine master key signing request 1";
    static final String KEY_REQUEST_HEADER = "brine master key pub_sig request 1";
    static final String SIGNATURE_HEADER = "brine master key signature 1";
    /** A request or signature of 16,384-bit keys stays far below this. */
    static final int MAX_BYTES = 64 * 1024;

    /** What the signing key is asked to sign: a rotation ({@link Request}) or the key in force ({@link KeyRequest}). */
    public sealed interface ToSign permits Request, KeyRequest {
        /** The master key Salt's {@code pub_sig} is made for. */
        RSAPublicKey master();

        long issuedMs();

        /** Reads a request file's text, of either kind (its first line says which). */
        static ToSign parse(String text) throws KeyStoreException {
            return text.startsWith(KEY_REQUEST_HEADER) ? KeyRequest.parse(text) : Request.parse(text);
        }
    }

    /**
     * A request to sign the master key in force without rotating it (a master whose key was never rotated, or one
     * switching {@code master_sign_pubkey} on): the signing key answers with Salt's {@code pub_sig} of {@code key}.
     */
    public record KeyRequest(RSAPublicKey master, long issuedMs) implements ToSign {

        public String text() {
            return KEY_REQUEST_HEADER + "\n"
                    + "key: " + Base64.getEncoder().encodeToString(master.getEncoded()) + "\n"
                    + "issued_ms: " + issuedMs + "\n";
        }

        public static KeyRequest parse(String text) throws KeyStoreException {
            Map<String, String> fields = fields(text, KEY_REQUEST_HEADER, "a master key pub_sig request");
            return new KeyRequest(key(fields, "key"), number(fields, "issued_ms"));
        }
    }

    /** What is signed: the succession from {@code previous} to {@code next} and its times. */
    public record Request(RSAPublicKey previous, RSAPublicKey next, long issuedMs, long graceUntilMs)
            implements ToSign {

        @Override
        public RSAPublicKey master() {
            return next;
        }

        byte[] signedBytes() {
            return MasterSuccessions.signedBytes(previous.getEncoded(), next.getEncoded(), issuedMs, graceUntilMs);
        }

        public String text() {
            return REQUEST_HEADER + "\n"
                    + "previous: " + Base64.getEncoder().encodeToString(previous.getEncoded()) + "\n"
                    + "next: " + Base64.getEncoder().encodeToString(next.getEncoded()) + "\n"
                    + "issued_ms: " + issuedMs + "\n"
                    + "grace_until_ms: " + graceUntilMs + "\n";
        }

        public static Request parse(String text) throws KeyStoreException {
            Map<String, String> fields = fields(text, REQUEST_HEADER, "a master key signing request");
            return new Request(
                    key(fields, "previous"),
                    key(fields, "next"),
                    number(fields, "issued_ms"),
                    number(fields, "grace_until_ms"));
        }
    }

    /**
     * The signing key's answer: its signature of the record ({@code succession}; null for a {@link KeyRequest}, which
     * has no record), and Salt's {@code pub_sig} of {@code next}, the new key or the key in force.
     */
    public record Signature(RSAPublicKey next, long issuedMs, byte[] succession, SaltPubkeySignature pubSig) {

        public String text() {
            StringBuilder text = new StringBuilder(SIGNATURE_HEADER)
                    .append('\n')
                    .append("next: ")
                    .append(Base64.getEncoder().encodeToString(next.getEncoded()))
                    .append('\n')
                    .append("issued_ms: ")
                    .append(issuedMs)
                    .append('\n');
            if (succession != null) {
                text.append("succession: ")
                        .append(Base64.getEncoder().encodeToString(succession))
                        .append('\n');
            }
            for (SaltRsa.Signing signing : SaltRsa.Signing.values()) {
                pubSig.forAlgorithm(signing)
                        .ifPresent(sig -> text.append("pub_sig ")
                                .append(signing.wireName())
                                .append(": ")
                                .append(sig)
                                .append('\n'));
            }
            return text.toString();
        }

        public static Signature parse(String text) throws KeyStoreException {
            Map<String, String> fields = fields(text, SIGNATURE_HEADER, "a master key signature");
            Map<SaltRsa.Signing, String> pubSigs = new EnumMap<>(SaltRsa.Signing.class);
            for (SaltRsa.Signing signing : SaltRsa.Signing.values()) {
                String value = fields.get("pub_sig " + signing.wireName());
                if (value != null) {
                    pubSigs.put(signing, value);
                }
            }
            if (pubSigs.isEmpty()) {
                throw new KeyStoreException("not a master key signature: no pub_sig line");
            }
            return new Signature(
                    key(fields, "next"),
                    number(fields, "issued_ms"),
                    fields.containsKey("succession") ? bytes(fields, "succession") : null,
                    new SaltPubkeySignature(pubSigs));
        }
    }

    private OfflineMasterSigning() {}

    /**
     * Step 1, on the master's machine: a new key pair kept pending beside the key in force, and the request to sign.
     * Refused while another is pending (finish it or {@link #cancel} it first).
     */
    public static Request prepare(Path pkiDir, int keysize, Duration grace, Clock clock)
            throws IOException, KeyStoreException {
        MasterKeyRotation.complete(pkiDir);
        refuseWhilePrepared(pkiDir);
        KeyPair current = MasterKeyRotation.readCurrent(pkiDir);
        KeyPair next = RsaKeys.generate(keysize);
        long issuedMs = clock.millis();
        Request request = new Request(
                (RSAPublicKey) current.getPublic(),
                (RSAPublicKey) next.getPublic(),
                issuedMs,
                issuedMs + grace.toMillis());
        AtomicFiles.write(
                pkiDir.resolve(PENDING_FILE),
                Pem.bytes(Pem.privateKeyPkcs1(next.getPrivate())),
                AtomicFiles.OWNER_READ);
        AtomicFiles.write(
                pkiDir.resolve(REQUEST_FILE),
                request.text().getBytes(StandardCharsets.US_ASCII),
                AtomicFiles.PUBLIC_READ);
        return request;
    }

    /** Step 2, where the signing key is, for a request of either kind. Touches no pki dir. */
    public static Signature sign(ToSign request, PrivateKey signingKey, RSAPublicKey signingPub)
            throws KeyStoreException {
        if (request instanceof Request rotation) {
            return sign(rotation, signingKey, signingPub);
        }
        if (Arrays.equals(signingPub.getEncoded(), request.master().getEncoded())) {
            throw new KeyStoreException(
                    "the signing key is the master key of the request itself, not a separate signing key");
        }
        return new Signature(
                request.master(), request.issuedMs(), null, SaltPubkeySignature.sign(signingKey, request.master()));
    }

    /** Step 2, where the signing key is: its signatures of {@code request}. Touches no pki dir. */
    public static Signature sign(Request request, PrivateKey signingKey, RSAPublicKey signingPub)
            throws KeyStoreException {
        if (Arrays.equals(signingPub.getEncoded(), request.previous().getEncoded())
                || Arrays.equals(signingPub.getEncoded(), request.next().getEncoded())) {
            throw new KeyStoreException(
                    "the signing key is a master key of the request itself, not a separate" + " signing key");
        }
        if (Arrays.equals(request.previous().getEncoded(), request.next().getEncoded())) {
            throw new KeyStoreException("the request's new key is its previous key");
        }
        return new Signature(
                request.next(),
                request.issuedMs(),
                Rsa.sign(signingKey, request.signedBytes()),
                SaltPubkeySignature.sign(signingKey, request.next()));
    }

    /**
     * Step 3, on the master's machine: checks {@code signature} against the pending rotation and {@code signingPub}
     * ({@code master_sign.pub}) and puts the pending key in force. Refused, with nothing changed, when nothing is
     * pending, the key in force is no longer the request's previous key, the request's grace is over, the signature
     * is for another key or request, or another key made it.
     */
    public static MasterKeyRotation.Rotated complete(
            Path pkiDir, Signature signature, RSAPublicKey signingPub, int keep, Clock clock)
            throws IOException, KeyStoreException {
        MasterKeyRotation.complete(pkiDir);
        Optional<Request> pending = pending(pkiDir);
        if (pending.isEmpty()) {
            throw new KeyStoreException(
                    "no prepared rotation in " + pkiDir + ": run brine-key --rotate-master-key" + " --prepare first");
        }
        Request request = pending.get();
        KeyPair next = MasterKeyRotation.readPrivate(pkiDir.resolve(PENDING_FILE));
        KeyPair current = MasterKeyRotation.readCurrent(pkiDir);
        if (!Arrays.equals(next.getPublic().getEncoded(), request.next().getEncoded())) {
            throw new KeyStoreException(pkiDir.resolve(PENDING_FILE) + " is not the key " + pkiDir.resolve(REQUEST_FILE)
                    + " names; drop both with brine-key --rotate-master-key --cancel and prepare again");
        }
        checkRotation(request, signature, (RSAPublicKey) current.getPublic(), signingPub, clock.millis());
        MasterKeyRotation.Rotated rotated = MasterKeyRotation.commit(
                pkiDir,
                current,
                next,
                request.issuedMs(),
                request.graceUntilMs(),
                keep,
                signature.succession(),
                Optional.of(signature.pubSig()));
        AtomicFiles.delete(pkiDir.resolve(PENDING_FILE));
        AtomicFiles.delete(pkiDir.resolve(REQUEST_FILE));
        return rotated;
    }

    /**
     * Whether {@code signature} signs the prepared {@code request} after the key in force {@code inForce}, made by the
     * key whose public half is {@code signingPub}, within the request's grace; the reason it does not, else. A master
     * alone's check and a cluster's.
     */
    public static void checkRotation(
            Request request, Signature signature, RSAPublicKey inForce, RSAPublicKey signingPub, long nowMs)
            throws KeyStoreException {
        if (signature.succession() == null) {
            throw new KeyStoreException("the signature is of the key in force (" + Fingerprints.of(signature.next())
                    + "), not of a rotation: install it with brine-key --master-pubkey-signature --signature FILE");
        }
        if (!Arrays.equals(inForce.getEncoded(), request.previous().getEncoded())) {
            throw new KeyStoreException("stale request: the key in force (" + Fingerprints.of(inForce)
                    + ") is no longer the one the request was prepared after (" + Fingerprints.of(request.previous())
                    + "); drop it with brine-key --rotate-master-key --cancel and prepare again");
        }
        if (nowMs >= request.graceUntilMs()) {
            throw new KeyStoreException("stale request: prepared at " + Instant.ofEpochMilli(request.issuedMs())
                    + ", its grace (master_key_grace) ended at " + Instant.ofEpochMilli(request.graceUntilMs())
                    + "; drop it with brine-key --rotate-master-key --cancel and prepare again");
        }
        if (!Arrays.equals(signature.next().getEncoded(), request.next().getEncoded())) {
            throw new KeyStoreException("the signature is for another key (" + Fingerprints.of(signature.next())
                    + "), not the prepared one (" + Fingerprints.of(request.next()) + ")");
        }
        if (signature.issuedMs() != request.issuedMs()) {
            throw new KeyStoreException("the signature is for another request of this key (prepared at "
                    + Instant.ofEpochMilli(signature.issuedMs()) + ", this one at "
                    + Instant.ofEpochMilli(request.issuedMs()) + ")");
        }
        if (!Rsa.verify(signingPub, request.signedBytes(), signature.succession())
                || !signature.pubSig().verifies(request.next(), signingPub)) {
            throw new KeyStoreException("the signature was not made by the master signing key whose public half is"
                    + " master_sign.pub (" + Fingerprints.of(signingPub) + ")");
        }
    }

    /**
     * Whether {@code signature} holds Salt's {@code pub_sig} of the key in force {@code inForce} made by the key whose
     * public half is {@code signingPub} ({@code master_sign.pub}); the reason it does not, else. What is installed
     * for the key in force, by a master alone and in a cluster; a rotation's signature whose key is now in force
     * passes too.
     */
    public static void checkKeySignature(Signature signature, RSAPublicKey inForce, RSAPublicKey signingPub)
            throws KeyStoreException {
        if (!Arrays.equals(signature.next().getEncoded(), inForce.getEncoded())) {
            throw new KeyStoreException("the signature is of another master key (" + Fingerprints.of(signature.next())
                    + "), not the key in force (" + Fingerprints.of(inForce) + "); prepare a request again with"
                    + " brine-key --master-pubkey-signature --prepare");
        }
        if (!signature.pubSig().verifies(inForce, signingPub)) {
            throw new KeyStoreException("the signature was not made by the master signing key whose public half is"
                    + " master_sign.pub (" + Fingerprints.of(signingPub) + ")");
        }
    }

    /**
     * The first step of signing the key in force without a rotation, on the master's machine: writes {@link
     * #KEY_REQUEST_FILE} for it (replacing an older one: a request holds public keys only). The caller holds the
     * store lock.
     */
    public static KeyRequest prepareKeySignature(Path pkiDir, Clock clock) throws IOException, KeyStoreException {
        MasterKeyRotation.complete(pkiDir);
        KeyRequest request = new KeyRequest(
                (RSAPublicKey) MasterKeyRotation.readCurrent(pkiDir).getPublic(), clock.millis());
        writeKeyRequest(pkiDir, request);
        return request;
    }

    /** The {@code master-key-rotation-prepared} audit line, for both backends. */
    public static AuditEvent prepared(Request request, String actor) {
        return AuditEvent.builder("master-key-rotation-prepared", actor)
                .from(Fingerprints.of(request.previous()))
                .to(Fingerprints.of(request.next()))
                .reason("waiting for the master signing key's signature; not in force")
                .build();
    }

    /** The {@code master-key-rotation-cancelled} audit line, for both backends. */
    public static AuditEvent cancelled(Optional<Request> request, String actor) {
        AuditEvent.Builder event = AuditEvent.builder("master-key-rotation-cancelled", actor)
                .reason("the prepared key was dropped; the key in force is unchanged");
        request.ifPresent(r -> event.from(Fingerprints.of(r.previous())).to(Fingerprints.of(r.next())));
        return event.build();
    }

    /** The {@code master-key-signature-installed} audit line, for both backends. */
    public static AuditEvent keySignatureInstalled(RSAPublicKey inForce, RSAPublicKey signingPub, String actor) {
        return AuditEvent.builder("master-key-signature-installed", actor)
                .to(Fingerprints.of(inForce))
                .reason("Salt's pub_sig of the master key in force, signed by the master signing key "
                        + Fingerprints.of(signingPub))
                .build();
    }

    /** Writes {@code request} as {@link #KEY_REQUEST_FILE} in {@code dir}. */
    public static Path writeKeyRequest(Path dir, KeyRequest request) throws IOException {
        Path file = dir.resolve(KEY_REQUEST_FILE);
        AtomicFiles.write(file, request.text().getBytes(StandardCharsets.US_ASCII), AtomicFiles.PUBLIC_READ);
        return file;
    }

    /**
     * The last step of signing the key in force: checks {@code signature} ({@link #checkKeySignature}) and writes it
     * as Salt's {@code pub_sig} of the key in force ({@code pki_dir/master_pubkey_signature}), which a running master
     * reads within a second. Refused, with nothing changed, as the check says. The caller holds the store lock.
     */
    public static RSAPublicKey installKeySignature(Path pkiDir, Signature signature, RSAPublicKey signingPub)
            throws IOException, KeyStoreException {
        MasterKeyRotation.complete(pkiDir);
        RSAPublicKey inForce =
                (RSAPublicKey) MasterKeyRotation.readCurrent(pkiDir).getPublic();
        checkKeySignature(signature, inForce, signingPub);
        AtomicFiles.write(
                pkiDir.resolve(SaltPubkeySignature.FILE),
                signature.pubSig().text().getBytes(StandardCharsets.US_ASCII),
                AtomicFiles.PUBLIC_READ);
        return inForce;
    }

    /** Drops a prepared rotation; returns its request, or empty when none was pending. */
    public static Optional<Request> cancel(Path pkiDir) throws IOException, KeyStoreException {
        Optional<Request> request;
        try {
            request = pending(pkiDir);
        } catch (KeyStoreException e) {
            request = Optional.empty(); // an unreadable request is dropped too
        }
        boolean any = false;
        for (String name : new String[] {PENDING_FILE, REQUEST_FILE}) {
            if (AtomicFiles.attributes(pkiDir.resolve(name)).isPresent()) {
                AtomicFiles.delete(pkiDir.resolve(name));
                any = true;
            }
        }
        if (!any) {
            throw new KeyStoreException("no prepared rotation in " + pkiDir + " to cancel");
        }
        return request;
    }

    /**
     * The prepared rotation's request; empty when none is pending. The files of one already in force (a crash after
     * its commit, before they were removed) are removed here.
     */
    public static Optional<Request> pending(Path pkiDir) throws IOException, KeyStoreException {
        Path file = pkiDir.resolve(REQUEST_FILE);
        Optional<PosixFileAttributes> found = AtomicFiles.attributes(file);
        if (found.isPresent()
                && AtomicFiles.attributes(pkiDir.resolve(MasterKeys.PUBLIC_FILE))
                        .isPresent()) {
            Request request = readRequest(file, found.get());
            if (Arrays.equals(
                    request.next().getEncoded(),
                    MasterKeys.readPublicIn(pkiDir)
                            .map(RSAPublicKey::getEncoded)
                            .orElse(null))) {
                if (AtomicFiles.attributes(pkiDir.resolve(PENDING_FILE)).isPresent()) {
                    AtomicFiles.delete(pkiDir.resolve(PENDING_FILE));
                }
                AtomicFiles.delete(file);
                return Optional.empty();
            }
        }
        Optional<PosixFileAttributes> attributes = AtomicFiles.attributes(file);
        if (attributes.isEmpty()) {
            if (AtomicFiles.attributes(pkiDir.resolve(PENDING_FILE)).isPresent()) {
                throw new KeyStoreException(pkiDir.resolve(PENDING_FILE) + " has no " + REQUEST_FILE + " beside it;"
                        + " drop it with brine-key --rotate-master-key --cancel");
            }
            return Optional.empty();
        }
        return Optional.of(readRequest(file, attributes.get()));
    }

    /** Reads a request file of either kind (an admin's copy, or pki_dir's). */
    public static ToSign readToSign(Path file) throws IOException, KeyStoreException {
        PosixFileAttributes attributes =
                AtomicFiles.attributes(file).orElseThrow(() -> new KeyStoreException(file + " does not exist"));
        if (!attributes.isRegularFile()) {
            throw new KeyStoreException(file + " is not a regular file");
        }
        try {
            return ToSign.parse(new String(AtomicFiles.readSmall(file, MAX_BYTES), StandardCharsets.US_ASCII));
        } catch (KeyStoreException e) {
            throw new KeyStoreException(file + ": " + e.getMessage(), e);
        }
    }

    /** Reads a request file (an admin's copy, or pki_dir's). */
    public static Request readRequest(Path file) throws IOException, KeyStoreException {
        return readRequest(
                file, AtomicFiles.attributes(file).orElseThrow(() -> new KeyStoreException(file + " does not exist")));
    }

    /** Reads a signature file. */
    public static Signature readSignature(Path file) throws IOException, KeyStoreException {
        PosixFileAttributes attributes =
                AtomicFiles.attributes(file).orElseThrow(() -> new KeyStoreException(file + " does not exist"));
        if (!attributes.isRegularFile()) {
            throw new KeyStoreException(file + " is not a regular file");
        }
        try {
            return Signature.parse(new String(AtomicFiles.readSmall(file, MAX_BYTES), StandardCharsets.US_ASCII));
        } catch (KeyStoreException e) {
            throw new KeyStoreException(file + ": " + e.getMessage(), e);
        }
    }

    static void refuseWhilePrepared(Path pkiDir) throws IOException, KeyStoreException {
        Optional<Request> pending = pending(pkiDir);
        if (pending.isPresent()) {
            throw new KeyStoreException("a prepared rotation is waiting for its signature (new key "
                    + Fingerprints.of(pending.get().next()) + ", prepared at "
                    + Instant.ofEpochMilli(pending.get().issuedMs())
                    + "): finish it with brine-key --rotate-master-key --signature FILE, or drop"
                    + " it with brine-key --rotate-master-key --cancel; nothing changed");
        }
    }

    private static Request readRequest(Path file, PosixFileAttributes attributes)
            throws IOException, KeyStoreException {
        if (!attributes.isRegularFile()) {
            throw new KeyStoreException(file + " is not a regular file");
        }
        try {
            return Request.parse(new String(AtomicFiles.readSmall(file, MAX_BYTES), StandardCharsets.US_ASCII));
        } catch (KeyStoreException e) {
            throw new KeyStoreException(file + ": " + e.getMessage(), e);
        }
    }

    private static Map<String, String> fields(String text, String header, String what) throws KeyStoreException {
        String[] lines = text.split("\n", -1);
        if (lines.length == 0 || !lines[0].strip().equals(header)) {
            throw new KeyStoreException("not " + what + " (its first line is not '" + header + "')");
        }
        Map<String, String> fields = new LinkedHashMap<>();
        for (int i = 1; i < lines.length; i++) {
            if (lines[i].isBlank()) {
                continue;
            }
            int colon = lines[i].indexOf(": ");
            if (colon <= 0) {
                throw new KeyStoreException("line " + (i + 1) + ": not 'name: value'");
            }
            if (fields.put(
                            lines[i].substring(0, colon),
                            lines[i].substring(colon + 2).strip())
                    != null) {
                throw new KeyStoreException("line " + (i + 1) + ": " + lines[i].substring(0, colon) + " twice");
            }
        }
        return fields;
    }

    private static String field(Map<String, String> fields, String name) throws KeyStoreException {
        String value = fields.get(name);
        if (value == null) {
            throw new KeyStoreException("no '" + name + "' line");
        }
        return value;
    }

    private static byte[] bytes(Map<String, String> fields, String name) throws KeyStoreException {
        try {
            return Base64.getDecoder().decode(field(fields, name));
        } catch (IllegalArgumentException e) {
            throw new KeyStoreException(name + ": not base64");
        }
    }

    private static long number(Map<String, String> fields, String name) throws KeyStoreException {
        try {
            long value = Long.parseLong(field(fields, name));
            if (value <= 0) {
                throw new NumberFormatException();
            }
            return value;
        } catch (NumberFormatException e) {
            throw new KeyStoreException(name + ": not a positive number");
        }
    }

    private static RSAPublicKey key(Map<String, String> fields, String name) throws KeyStoreException {
        byte[] der = bytes(fields, name);
        try {
            RSAPublicKey key = (RSAPublicKey) KeyFactory.getInstance("RSA").generatePublic(new X509EncodedKeySpec(der));
            // The same checks a master key gets (size, exponent): the DER re-read through the PEM reader.
            return (RSAPublicKey) Pem.readPublicKey(Pem.publicKeySpki(key));
        } catch (GeneralSecurityException | ClassCastException | KeyFormatException e) {
            throw new KeyStoreException(name + ": not an RSA public key");
        }
    }
}
