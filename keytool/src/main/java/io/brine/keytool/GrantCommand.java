package io.brine.keytool;

import io.brine.daemon.files.AtomicFiles;
import io.brine.protocol.MinionIds;
import io.brine.protocol.crypto.Fingerprints;
import io.brine.protocol.crypto.KeyFormatException;
import io.brine.protocol.crypto.Pem;
import io.brine.protocol.crypto.RsaKeys;
import io.brine.protocol.grant.Grants;
import io.brine.protocol.grant.ProvisioningGrant;
import java.io.IOException;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Path;
import java.security.KeyPair;
import java.security.interfaces.RSAPublicKey;
import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParentCommand;
import picocli.CommandLine.Spec;

/** {@code brine-key grant}: a provisioning grant signed with a provisioner's key, for a provisioning system. */
@Command(
        name = "grant",
        mixinStandardHelpOptions = true,
        usageHelpAutoWidth = true,
        sortOptions = false,
        header = "Make a signed provisioning grant for a new host's key.",
        description = {
            "Signs a grant (PROTOCOL.md, 'Provisioning grants') with the provisioner's private key: the host ID may"
                    + " enrol with the key in --pub for --ttl seconds, once, classified as the --class pairs. Give"
                    + " the grant to the host (minion.yaml: autosign_grant); a master that trusts the provisioner"
                    + " (its public key in pki_dir/provisioners/NAME.pub) accepts the key at once. Make a"
                    + " provisioner key pair with: brine-key --gen-keys NAME --gen-keys-dir DIR.",
        })
final class GrantCommand implements Callable<Integer> {

    @ParentCommand
    BrineKey root;

    @Spec
    CommandSpec spec;

    @Option(
            names = "--provisioner-key",
            required = true,
            paramLabel = "FILE",
            description = "The provisioner's private key (PEM, as --gen-keys writes NAME.pem).")
    Path provisionerKey;

    @Option(names = "--id", required = true, paramLabel = "ID", description = "The host's minion id.")
    String id;

    @Option(
            names = "--pub",
            required = true,
            paramLabel = "FILE",
            description = "The host's public key (PEM): the grant is for this key only.")
    Path pub;

    @Option(
            names = "--ttl",
            required = true,
            paramLabel = "SECONDS",
            description = "How long the grant is valid: 1 to 2592000 (30 days).")
    long ttl;

    @Option(
            names = "--class",
            paramLabel = "KEY=VALUE",
            description = "A classification pair, stored with the minion and targetable as grain class:KEY:VALUE"
                    + " (repeatable). KEY is 1-64 characters of [A-Za-z0-9_.-].")
    List<String> classes = List.of();

    @Option(
            names = {"-o", "--out"},
            paramLabel = "FILE",
            description = "Write the grant to FILE (mode 0600, not over an existing file) instead of stdout.")
    Path outFile;

    @Override
    public Integer call() {
        MinionIds.problem(id).ifPresent(problem -> {
            throw UserError.usage("--id " + MinionIds.printable(id) + ": " + problem);
        });
        if (ttl < 1 || ttl > ProvisioningGrant.MAX_LIFETIME_SECONDS) {
            throw UserError.usage("--ttl: expected 1 to " + ProvisioningGrant.MAX_LIFETIME_SECONDS
                    + " seconds (30 days), got " + ttl);
        }
        Map<String, String> classification = new LinkedHashMap<>();
        for (String pair : classes) {
            int equals = pair.indexOf('=');
            if (equals < 0) {
                throw UserError.usage("--class " + MinionIds.printable(pair) + ": expected KEY=VALUE");
            }
            String key = pair.substring(0, equals);
            String value = pair.substring(equals + 1);
            ProvisioningGrant.classProblem(key, value).ifPresent(problem -> {
                throw UserError.usage("--class: " + problem);
            });
            if (classification.put(key, value) != null) {
                throw UserError.usage("--class: " + key + " is given twice");
            }
        }
        KeyPair provisioner = readPrivate(provisionerKey);
        RSAPublicKey host = readPublic(pub);
        Instant now = Instant.ofEpochSecond(Instant.now().getEpochSecond());
        ProvisioningGrant grant;
        try {
            grant = new ProvisioningGrant(
                    id, Fingerprints.of(host), now, now.plusSeconds(ttl), classification, Grants.newNonce());
        } catch (IllegalArgumentException e) {
            throw UserError.usage(e.getMessage());
        }
        byte[] bytes;
        try {
            bytes = Grants.sign(grant, provisioner);
        } catch (IllegalArgumentException e) {
            throw UserError.usage(e.getMessage());
        }
        PrintWriter out = spec.commandLine().getOut();
        if (outFile == null) {
            out.print(new String(bytes, StandardCharsets.UTF_8));
            out.flush();
            return 0;
        }
        try {
            AtomicFiles.create(outFile, bytes, AtomicFiles.OWNER_RW);
        } catch (FileAlreadyExistsException e) {
            throw new UserError(UserError.REFUSED, outFile + " already exists; not overwritten");
        } catch (IOException e) {
            throw new UserError(UserError.REFUSED, "cannot write " + outFile + ": " + BrineKey.describe(e));
        }
        if (!root.quiet()) {
            out.println("Wrote a grant for " + id + " (key " + grant.fingerprint() + ") to " + outFile
                    + ", valid until " + grant.notAfter());
            out.flush();
        }
        return 0;
    }

    private static KeyPair readPrivate(Path file) {
        try {
            return Pem.readPrivateKey(
                    new String(AtomicFiles.readSmall(file, Pem.MAX_PEM_CHARS), StandardCharsets.US_ASCII));
        } catch (IOException e) {
            throw UserError.usage("--provisioner-key " + file + ": " + BrineKey.describe(e));
        } catch (KeyFormatException e) {
            throw UserError.usage("--provisioner-key " + file + ": " + e.getMessage());
        }
    }

    private static RSAPublicKey readPublic(Path file) {
        try {
            return RsaKeys.checkSize(Pem.readPublicKey(
                    new String(AtomicFiles.readSmall(file, Pem.MAX_PEM_CHARS), StandardCharsets.US_ASCII)));
        } catch (IOException e) {
            throw UserError.usage("--pub " + file + ": " + BrineKey.describe(e));
        } catch (KeyFormatException e) {
            throw UserError.usage("--pub " + file + ": " + e.getMessage());
        }
    }
}
