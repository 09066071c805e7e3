package io.brine.keytool;

import io.brine.cluster.ZkKeyStore;
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
import io.brine.store.keys.OutcomeUnknownException;
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

    /**
     * Step 1: the new key, pending, and the request to sign; in a cluster both are kept in ZooKeeper, where any
     * master host finishes or cancels the rotation, and the request is also written here for the admin to carry.
     */
    int prepare(KeytoolConfig config, MasterConfig settings) {
        Path signPub = signPub(config, settings, "--rotate-master-key --prepare");
        KeyPair installed = installed(config, "--rotate-master-key --prepare");
        AuditLog audit = command.openAudit(config);
        try (KeyStore store = command.openStore(config, audit)) {
            readSigningPub(signPub, "--rotate-master-key --prepare");
            Path file = config.pkiDir().resolve(OfflineMasterSigning.REQUEST_FILE);
            OfflineMasterSigning.Request request;
            if (store instanceof ZkKeyStore cluster) {
                request = cluster.prepareMasterKeyRotation(
                        installed, settings.keysize(), settings.masterKeyGrace(), command.actor(), Clock.systemUTC());
                AtomicFiles.write(file, request.text().getBytes(StandardCharsets.US_ASCII), AtomicFiles.PUBLIC_READ);
            } else {
                request = ((FileKeyStore) store)
                        .prepareMasterKeyRotation(settings.keysize(), settings.masterKeyGrace(), Clock.systemUTC());
            }
            if (output.text()) {
                if (!command.quiet()) {
                    output.out()
                            .println("New master key " + Fingerprints.of(request.next()) + " prepared"
                                    + (installed != null ? " in the cluster (ZooKeeper)" : "") + ", not in"
                                    + " force; the key in force (" + Fingerprints.of(request.previous())
                                    + ") stays until the"
                                    + " rotation is signed.");
                    output.out().println("Request to sign: " + file);
                    output.out()
                            .println("On the machine that holds the master signing key: brine-key"
                                    + " --sign-master-key " + OfflineMasterSigning.REQUEST_FILE
                                    + " --master-sign-key FILE");
                    output.out()
                            .println("Then " + (installed != null ? "on a master host" : "here")
                                    + ": brine-key --rotate-master-key --signature "
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
        } catch (OutcomeUnknownException e) {
            throw new UserError(
                    UserError.REFUSED,
                    "the master key rotation may or may not have been prepared: " + e.getMessage()
                            + "; the key in force is unchanged either way: brine-key --rotate-master-key --cancel drops"
                            + " it if it was");
        } catch (IOException e) {
            throw new UserError(
                    UserError.REFUSED,
                    "cannot prepare a master key rotation in " + where(config, installed) + ": " + BrineKey.describe(e)
                            + "; the key in force is unchanged");
        } finally {
            audit.close();
        }
    }

    /**
     * Step 2, off the master: signs {@code requestFile} (a rotation's, or the key in force's) with {@code
     * signingKeyFile}; writes {@code out}.
     */
    int sign(Path requestFile, Path signingKeyFile, Path out) {
        Path target = out != null ? out : requestFile.resolveSibling(requestFile.getFileName() + ".sig");
        OfflineMasterSigning.ToSign request;
        KeyPair signingKey;
        try {
            request = OfflineMasterSigning.readToSign(requestFile);
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
        OfflineMasterSigning.Request rotation = request instanceof OfflineMasterSigning.Request r ? r : null;
        if (output.text()) {
            if (!command.quiet()) {
                output.out()
                        .println((rotation != null
                                        ? "Signed the master key rotation " + Fingerprints.of(rotation.previous())
                                                + " -> " + Fingerprints.of(rotation.next())
                                        : "Signed the master key " + Fingerprints.of(request.master())
                                                + " (Salt's pub_sig, no rotation)")
                                + " (prepared at "
                                + Instant.ofEpochMilli(request.issuedMs()) + ") with the master signing key "
                                + Fingerprints.of(signingKey.getPublic()) + ": " + target);
                output.out()
                        .println("On the master: brine-key "
                                + (rotation != null ? "--rotate-master-key" : "--master-pubkey-signature")
                                + " --signature " + target.getFileName());
            }
            output.out().flush();
            return 0;
        }
        Map<String, Object> document = new LinkedHashMap<>();
        if (rotation != null) {
            document.put("previous", Fingerprints.of(rotation.previous()));
        }
        document.put(rotation != null ? "next" : "key", Fingerprints.of(request.master()));
        document.put("signing_key", Fingerprints.of(signingKey.getPublic()));
        document.put("signature", target.toString());
        return output.printStructured(document);
    }

    /** Step 3: checks the signature and puts the prepared key in force (on every master of a cluster). */
    int complete(KeytoolConfig config, MasterConfig settings, Path signatureFile) {
        Path signPub = signPub(config, settings, "--rotate-master-key --signature");
        OfflineMasterSigning.Signature signature = readSignature(signatureFile);
        KeyPair installed = installed(config, "--rotate-master-key --signature");
        AuditLog audit = command.openAudit(config);
        try (KeyStore store = command.openStore(config, audit)) {
            RSAPublicKey signer = readSigningPub(signPub, "--rotate-master-key --signature");
            MasterKeyRotation.Rotated rotated = store instanceof ZkKeyStore cluster
                    ? cluster.completeMasterKeyRotation(
                            installed, signature, signer, settings.masterKeyChain(), command.actor(), Clock.systemUTC())
                    : ((FileKeyStore) store)
                            .completeMasterKeyRotation(signature, signer, settings.masterKeyChain(), Clock.systemUTC());
            if (installed != null) {
                dropCopy(config.pkiDir().resolve(OfflineMasterSigning.REQUEST_FILE));
            }
            return ChangeKeys.printRotated(output, command.quiet(), rotated, true, installed != null);
        } catch (KeyStoreException e) {
            throw new UserError(UserError.REFUSED, e.getMessage() + "; nothing changed");
        } catch (OutcomeUnknownException e) {
            throw ChangeKeys.rotationOutcomeUnknown(e);
        } catch (IOException e) {
            throw new UserError(
                    UserError.REFUSED,
                    "cannot rotate the master key in " + where(config, installed) + ": " + BrineKey.describe(e)
                            + "; the previous key stays in force");
        } finally {
            audit.close();
        }
    }

    /**
     * Signing the key in force without a rotation, step 1: writes the request, {@code
     * pki_dir/master_pubkey_signature.request}, for the key in force (a cluster's: the newest in ZooKeeper).
     */
    int prepareKeySignature(KeytoolConfig config, MasterConfig settings) {
        Path signPub = signPub(config, settings, "--master-pubkey-signature --prepare");
        AuditLog audit = command.openAudit(config);
        try (KeyStore store = command.openStore(config, audit)) {
            readSigningPub(signPub, "--master-pubkey-signature --prepare");
            OfflineMasterSigning.KeyRequest request;
            Path file;
            if (store instanceof ZkKeyStore cluster) {
                RSAPublicKey inForce = cluster.masterPublicKey()
                        .orElseThrow(() -> new KeyStoreException(config.pkiDir().resolve("master.pub")
                                + " is missing: the cluster's key in force is reached from it"));
                request = new OfflineMasterSigning.KeyRequest(
                        inForce, Clock.systemUTC().millis());
                file = OfflineMasterSigning.writeKeyRequest(config.pkiDir(), request);
            } else {
                request = ((FileKeyStore) store).prepareMasterKeySignature(Clock.systemUTC());
                file = config.pkiDir().resolve(OfflineMasterSigning.KEY_REQUEST_FILE);
            }
            if (output.text()) {
                if (!command.quiet()) {
                    output.out()
                            .println("Request to sign the master key in force " + Fingerprints.of(request.master())
                                    + " (Salt's pub_sig; no rotation): " + file);
                    output.out()
                            .println("On the machine that holds the master signing key: brine-key"
                                    + " --sign-master-key " + OfflineMasterSigning.KEY_REQUEST_FILE
                                    + " --master-sign-key FILE");
                    output.out()
                            .println("Then " + (store instanceof ZkKeyStore ? "on any host of the cluster" : "here")
                                    + ": brine-key --master-pubkey-signature --signature "
                                    + OfflineMasterSigning.KEY_REQUEST_FILE + ".sig");
                }
                output.out().flush();
                return 0;
            }
            Map<String, Object> document = new LinkedHashMap<>();
            document.put("key", Fingerprints.of(request.master()));
            document.put("request", file.toString());
            return output.printStructured(document);
        } catch (KeyStoreException e) {
            throw new UserError(UserError.REFUSED, e.getMessage() + "; nothing written");
        } catch (IOException e) {
            throw new UserError(
                    UserError.REFUSED, "cannot write the request in " + config.pkiDir() + ": " + BrineKey.describe(e));
        } finally {
            audit.close();
        }
    }

    /**
     * Signing the key in force, step 3: checks the signature against {@code master_sign.pub} and the key in force,
     * and installs it as Salt's {@code pub_sig} (a master alone: {@code pki_dir/master_pubkey_signature}; a cluster:
     * in ZooKeeper, for every master).
     */
    int installKeySignature(KeytoolConfig config, MasterConfig settings, Path signatureFile) {
        Path signPub = signPub(config, settings, "--master-pubkey-signature --signature");
        OfflineMasterSigning.Signature signature = readSignature(signatureFile);
        AuditLog audit = command.openAudit(config);
        boolean inCluster = config.cluster().isPresent();
        try (KeyStore store = command.openStore(config, audit)) {
            RSAPublicKey signer = readSigningPub(signPub, "--master-pubkey-signature --signature");
            RSAPublicKey inForce;
            if (store instanceof ZkKeyStore cluster) {
                RSAPublicKey installed = MasterKeys.readPublicIn(config.pkiDir())
                        .orElseThrow(() -> new KeyStoreException(config.pkiDir().resolve("master.pub")
                                + " is missing: the cluster's key in force is reached from it"));
                inForce = cluster.installMasterKeySignature(installed, signature, signer, command.actor());
            } else {
                inForce = ((FileKeyStore) store).installMasterKeySignature(signature, signer);
            }
            if (output.text()) {
                if (!command.quiet()) {
                    output.out()
                            .println("Salt's pub_sig of the master key in force " + Fingerprints.of(inForce)
                                    + " installed" + (inCluster ? " in the cluster" : "") + ": "
                                    + (inCluster ? "every running master" : "a running master")
                                    + " sends it to Salt minions within a second.");
                }
                output.out().flush();
                return 0;
            }
            Map<String, Object> document = new LinkedHashMap<>();
            document.put("key", Fingerprints.of(inForce));
            document.put("signing_key", Fingerprints.of(signer));
            return output.printStructured(document);
        } catch (KeyStoreException e) {
            throw new UserError(UserError.REFUSED, e.getMessage() + "; nothing changed");
        } catch (OutcomeUnknownException e) {
            throw new UserError(
                    UserError.REFUSED,
                    "Salt's pub_sig may or may not have been installed: " + e.getMessage()
                            + "; run the same command again: installing it twice is harmless");
        } catch (IOException e) {
            throw new UserError(
                    UserError.REFUSED,
                    "cannot install Salt's pub_sig in " + (inCluster ? "the cluster" : config.pkiDir()) + ": "
                            + BrineKey.describe(e) + "; nothing changed");
        } finally {
            audit.close();
        }
    }

    /** Drops a prepared rotation. */
    int cancel(KeytoolConfig config) {
        AuditLog audit = command.openAudit(config);
        try (KeyStore store = command.openStore(config, audit)) {
            Optional<OfflineMasterSigning.Request> dropped;
            if (store instanceof ZkKeyStore cluster) {
                dropped = cluster.cancelPreparedMasterKeyRotation(command.actor());
                dropCopy(config.pkiDir().resolve(OfflineMasterSigning.REQUEST_FILE));
            } else {
                dropped = ((FileKeyStore) store).cancelPreparedMasterKeyRotation();
            }
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
        } catch (OutcomeUnknownException e) {
            throw new UserError(
                    UserError.REFUSED,
                    "the prepared rotation may or may not have been dropped: " + e.getMessage()
                            + "; the key in force is unchanged either way: run the same command again");
        } catch (IOException e) {
            throw new UserError(
                    UserError.REFUSED,
                    "cannot drop the prepared rotation in "
                            + (config.cluster().isPresent() ? "the cluster" : config.pkiDir()) + ": "
                            + BrineKey.describe(e));
        } finally {
            audit.close();
        }
    }

    /** {@code master_sign.pub} in the pki dir brine-key works on; the two steps need {@code master_sign_pubkey}. */
    private static Path signPub(KeytoolConfig config, MasterConfig settings, String option) {
        return settings.masterSignPub()
                .map(pub -> config.pkiDir().resolve(pub.getFileName()))
                .orElseThrow(() -> UserError.usage(option + ": master_sign_pubkey is off in master.yaml, so there is no"
                        + " master_sign.pub to check the offline signature against; set it (and put the signing key's"
                        + " public half in pki_dir/master_sign.pub)"
                        + (option.startsWith("--rotate-master-key")
                                ? ", or rotate without a signing key with --rotate-master-key alone"
                                : "")
                        + "; nothing changed"));
    }

    private static RSAPublicKey readSigningPub(Path signPub, String option) throws IOException, KeyStoreException {
        return MasterKeys.readPublic(signPub)
                .orElseThrow(() -> new KeyStoreException(option + ": " + signPub
                        + " does not exist: master_sign_pubkey needs the signing key's public half there"));
    }

    /**
     * A cluster host's installed master key pair, from which the key in force is reached and which signs the
     * cluster's records; null for a master alone (its store holds its key).
     */
    private static KeyPair installed(KeytoolConfig config, String option) {
        if (config.cluster().isEmpty()) {
            return null;
        }
        try {
            return MasterKeys.loadInstalled(config.pkiDir());
        } catch (KeyStoreException e) {
            throw UserError.usage(option + ": " + e.getMessage() + "; nothing changed");
        } catch (IOException e) {
            throw UserError.usage(option + ": cannot read this master's key in " + config.pkiDir() + " ("
                    + BrineKey.describe(e) + "): a cluster's rotation is signed with it, on a master host; run"
                    + " brine-key as the master's user; nothing changed");
        }
    }

    private static OfflineMasterSigning.Signature readSignature(Path file) {
        try {
            return OfflineMasterSigning.readSignature(file);
        } catch (KeyStoreException | IOException e) {
            throw UserError.usage("--signature: " + message(e) + "; nothing changed");
        }
    }

    /** Removes this host's copy of a cluster's request once the rotation is done or dropped (it names a stale key). */
    private void dropCopy(Path file) {
        try {
            if (AtomicFiles.attributes(file).isPresent()) {
                AtomicFiles.delete(file);
            }
        } catch (IOException e) {
            output.err().println("brine-key: warning: " + file + " not removed: " + BrineKey.describe(e));
            output.err().flush();
        }
    }

    private static String where(KeytoolConfig config, KeyPair installed) {
        return installed != null ? "the cluster" : config.pkiDir().toString();
    }

    private static String message(Exception e) {
        return e instanceof KeyStoreException ? e.getMessage() : BrineKey.describe(e);
    }
}
