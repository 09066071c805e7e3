package io.brine.keytool;

import io.brine.daemon.config.MasterConfig;
import io.brine.daemon.files.AtomicFiles;
import io.brine.protocol.crypto.Fingerprints;
import io.brine.store.audit.AuditLog;
import io.brine.store.keys.FileKeyStore;
import io.brine.store.keys.KeyStore;
import io.brine.store.keys.KeyStoreException;
import io.brine.store.keys.MasterKeyRotation;
import io.brine.store.keys.MasterKeys;
import io.brine.store.keys.OfflineMasterSigning;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Path;
import java.security.KeyPair;
import java.security.interfaces.RSAPublicKey;
import java.time.Clock;
import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Optional;

/**
 * The master key rotation signed offline in two steps ({@link OfflineMasterSigning}): {@code --rotate-master-key
 * --prepare} and {@code --signature FILE} (or {@code --cancel}) on the master's machine, {@code --sign-master-key
 * REQUEST --master-sign-key FILE} on the one that holds the signing key.
 */
final class MasterKeySigning {

    private final BrineKey command;
    private final Output output;

    MasterKeySigning(BrineKey command, Output output) {
        this.command = command;
        this.output = output;
    }

    /** Step 1: the new key, pending, and the request to sign. */
    int prepare(KeytoolConfig config, MasterConfig settings) {
        Path signPub = signPub(config, settings, "--prepare");
        AuditLog audit = command.openAudit(config);
        try (KeyStore store = command.openStore(config, audit)) {
            readSigningPub(signPub, "--prepare");
            OfflineMasterSigning.Request request = ((FileKeyStore) store)
                    .prepareMasterKeyRotation(settings.keysize(), settings.masterKeyGrace(), Clock.systemUTC());
            Path file = config.pkiDir().resolve(OfflineMasterSigning.REQUEST_FILE);
            if (output.text()) {
                if (!command.quiet()) {
                    output.out()
                            .println("New master key " + Fingerprints.of(request.next()) + " prepared, not in"
                                    + " force; the key in force (" + Fingerprints.of(request.previous())
                                    + ") stays until the"
                                    + " rotation is signed.");
                    output.out().println("Request to sign: " + file);
                    output.out()
                            .println("On the machine that holds the master signing key: brine-key"
                                    + " --sign-master-key " + OfflineMasterSigning.REQUEST_FILE
                                    + " --master-sign-key FILE");
                    output.out()
                            .println("Then here: brine-key --rotate-master-key --signature "
                                    + OfflineMasterSigning.REQUEST_FILE + ".sig (before "
                                    + Instant.ofEpochMilli(request.graceUntilMs()) + ")");
                }
                output.out().flush();
                return 0;
            }
            Map<String, Object> document = new LinkedHashMap<>();
            document.put("current", Fingerprints.of(request.previous()));
            document.put("prepared", Fingerprints.of(request.next()));
            document.put("request", file.toString());
            document.put(
                    "sign_before", Instant.ofEpochMilli(request.graceUntilMs()).toString());
            return output.printStructured(document);
        } catch (KeyStoreException e) {
            throw new UserError(UserError.REFUSED, e.getMessage());
        } catch (IOException e) {
            throw new UserError(
                    UserError.REFUSED,
                    "cannot prepare a master key rotation in " + config.pkiDir() + ": " + BrineKey.describe(e)
                            + "; the key in force is unchanged");
        } finally {
            audit.close();
        }
    }

    /** Step 2, off the master: signs {@code requestFile} with {@code signingKeyFile}; writes {@code out}. */
    int sign(Path requestFile, Path signingKeyFile, Path out) {
        Path target = out != null ? out : requestFile.resolveSibling(requestFile.getFileName() + ".sig");
        OfflineMasterSigning.Request request;
        KeyPair signingKey;
        try {
            request = OfflineMasterSigning.readRequest(requestFile);
        } catch (KeyStoreException | IOException e) {
            throw UserError.usage("--sign-master-key: " + message(e) + "; nothing signed");
        }
        try {
            signingKey = MasterKeyRotation.readOfflineSigningKey(signingKeyFile);
        } catch (KeyStoreException | IOException e) {
            throw UserError.usage("--master-sign-key: " + message(e) + "; nothing signed");
        }
        OfflineMasterSigning.Signature signature;
        try {
            signature =
                    OfflineMasterSigning.sign(request, signingKey.getPrivate(), (RSAPublicKey) signingKey.getPublic());
        } catch (KeyStoreException e) {
            throw new UserError(UserError.REFUSED, "--sign-master-key: " + e.getMessage() + "; nothing signed");
        }
        try {
            AtomicFiles.create(target, signature.text().getBytes(StandardCharsets.US_ASCII), AtomicFiles.PUBLIC_READ);
        } catch (FileAlreadyExistsException e) {
            throw new UserError(
                    UserError.REFUSED,
                    target + " exists: remove it or name another file with" + " --signature FILE; nothing written");
        } catch (IOException e) {
            throw new UserError(UserError.REFUSED, "cannot write " + target + ": " + BrineKey.describe(e));
        }
        if (output.text()) {
            if (!command.quiet()) {
                output.out()
                        .println("Signed the master key rotation " + Fingerprints.of(request.previous())
                                + " -> " + Fingerprints.of(request.next()) + " (prepared at "
                                + Instant.ofEpochMilli(request.issuedMs()) + ") with the master signing key "
                                + Fingerprints.of(signingKey.getPublic()) + ": " + target);
                output.out()
                        .println("On the master: brine-key --rotate-master-key --signature " + target.getFileName());
            }
            output.out().flush();
            return 0;
        }
        Map<String, Object> document = new LinkedHashMap<>();
        document.put("previous", Fingerprints.of(request.previous()));
        document.put("next", Fingerprints.of(request.next()));
        document.put("signing_key", Fingerprints.of(signingKey.getPublic()));
        document.put("signature", target.toString());
        return output.printStructured(document);
    }

    /** Step 3: checks the signature and puts the prepared key in force. */
    int complete(KeytoolConfig config, MasterConfig settings, Path signatureFile) {
        Path signPub = signPub(config, settings, "--signature");
        OfflineMasterSigning.Signature signature;
        try {
            signature = OfflineMasterSigning.readSignature(signatureFile);
        } catch (KeyStoreException | IOException e) {
            throw UserError.usage("--signature: " + message(e) + "; nothing changed");
        }
        AuditLog audit = command.openAudit(config);
        try (KeyStore store = command.openStore(config, audit)) {
            RSAPublicKey signer = readSigningPub(signPub, "--signature");
            MasterKeyRotation.Rotated rotated = ((FileKeyStore) store)
                    .completeMasterKeyRotation(signature, signer, settings.masterKeyChain(), Clock.systemUTC());
            return ChangeKeys.printRotated(output, command.quiet(), rotated, true, false);
        } catch (KeyStoreException e) {
            throw new UserError(UserError.REFUSED, e.getMessage() + "; nothing changed");
        } catch (IOException e) {
            throw new UserError(
                    UserError.REFUSED,
                    "cannot rotate the master key in " + config.pkiDir() + ": " + BrineKey.describe(e)
                            + "; the previous key stays in force");
        } finally {
            audit.close();
        }
    }

    /** Drops a prepared rotation. */
    int cancel(KeytoolConfig config) {
        refuseCluster(config, "--cancel");
        AuditLog audit = command.openAudit(config);
        try (KeyStore store = command.openStore(config, audit)) {
            Optional<OfflineMasterSigning.Request> dropped = ((FileKeyStore) store).cancelPreparedMasterKeyRotation();
            if (!command.quiet()) {
                output.err()
                        .println("brine-key: the prepared master key"
                                + dropped.map(r -> " " + Fingerprints.of(r.next()))
                                        .orElse("") + " is dropped; the key in force is unchanged");
                output.err().flush();
            }
            return 0;
        } catch (KeyStoreException e) {
            throw new UserError(UserError.REFUSED, e.getMessage());
        } catch (IOException e) {
            throw new UserError(
                    UserError.REFUSED,
                    "cannot drop the prepared rotation in " + config.pkiDir() + ": " + BrineKey.describe(e));
        } finally {
            audit.close();
        }
    }

    /** {@code master_sign.pub} in the pki dir brine-key works on; the two steps need {@code master_sign_pubkey}. */
    private static Path signPub(KeytoolConfig config, MasterConfig settings, String option) {
        refuseCluster(config, option);
        return settings.masterSignPub()
                .map(pub -> config.pkiDir().resolve(pub.getFileName()))
                .orElseThrow(() ->
                        UserError.usage("--rotate-master-key " + option + ": master_sign_pubkey is off in master.yaml,"
                                + " so there is no master_sign.pub to check the offline signature against; set it (and put"
                                + " the signing key's public half in pki_dir/master_sign.pub), or rotate without a signing"
                                + " key with --rotate-master-key alone; nothing changed"));
    }

    private static RSAPublicKey readSigningPub(Path signPub, String option) throws IOException, KeyStoreException {
        return MasterKeys.readPublic(signPub)
                .orElseThrow(() -> new KeyStoreException("--rotate-master-key "
                        + option + ": " + signPub
                        + " does not exist: master_sign_pubkey needs the signing key's public half"
                        + " there"));
    }

    private static void refuseCluster(KeytoolConfig config, String option) {
        if (config.cluster().isPresent()) {
            // A cluster's records must be signed by the key in force (ZkMasterKeys), which is on the master host, and
            // Salt's pub_sig is not kept in ZooKeeper: the offline steps have nowhere to put what they make.
            throw UserError.usage("--rotate-master-key " + option + ": the two-step offline signing is for a master"
                    + " alone; a cluster's rotation goes to ZooKeeper in one step on a master host: brine-key"
                    + " --rotate-master-key --master-sign-key FILE there (a cluster's masters send Salt minions no"
                    + " pub_sig, SALT.md 4.1); nothing changed");
        }
    }

    private static String message(Exception e) {
        return e instanceof KeyStoreException ? e.getMessage() : BrineKey.describe(e);
    }
}
