package io.brine.keytool;

import io.brine.daemon.files.AtomicFiles;
import io.brine.protocol.MinionIds;
import io.brine.protocol.crypto.Fingerprints;
import io.brine.protocol.crypto.RsaKeys;
import io.brine.store.keys.KeyPairFiles;
import java.io.IOException;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.security.KeyPair;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/** {@code brine-key --gen-keys NAME}: a key pair as NAME.pem (0400) and NAME.pub, never over an existing file. */
final class GenerateKeys {

    private GenerateKeys() {}

    static int run(String name, int keysize, Path genKeysDir, Output output, boolean quiet) {
        MinionIds.problem(name).ifPresent(problem -> {
            throw UserError.usage("--gen-keys " + MinionIds.printable(name) + ": " + problem);
        });
        try {
            RsaKeys.checkGenerateSize(keysize);
        } catch (IllegalArgumentException e) {
            throw UserError.usage("--keysize: " + e.getMessage());
        }
        Path dir = (genKeysDir != null ? genKeysDir : Path.of("."))
                .toAbsolutePath()
                .normalize();
        try {
            if (!Files.isDirectory(dir)) {
                AtomicFiles.ensureDirectory(dir);
            }
            for (String file : List.of(name + ".pem", name + ".pub")) {
                if (Files.exists(dir.resolve(file), LinkOption.NOFOLLOW_LINKS)) {
                    throw new UserError(UserError.REFUSED, dir.resolve(file) + " already exists; not overwritten");
                }
            }
            KeyPair pair = RsaKeys.generate(keysize);
            KeyPairFiles.writeNew(dir, name, pair);
            String fingerprint = Fingerprints.of(pair.getPublic());
            if (output.text()) {
                if (!quiet) {
                    output.out()
                            .println("Wrote " + dir.resolve(name + ".pem") + " (private key, mode 0400) and "
                                    + dir.resolve(name + ".pub") + " (public key)");
                    output.out().println("Fingerprint: " + fingerprint);
                    output.out().flush();
                }
                return 0;
            }
            Map<String, Object> document = new LinkedHashMap<>();
            document.put("private", dir.resolve(name + ".pem").toString());
            document.put("public", dir.resolve(name + ".pub").toString());
            document.put("fingerprint", fingerprint);
            return output.printStructured(document);
        } catch (FileAlreadyExistsException e) {
            throw new UserError(UserError.REFUSED, e.getFile() + " already exists; not overwritten");
        } catch (IOException e) {
            throw new UserError(UserError.REFUSED, "cannot write the key pair in " + dir + ": " + BrineKey.describe(e));
        }
    }
}
