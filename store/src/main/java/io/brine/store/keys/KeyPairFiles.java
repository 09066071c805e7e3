package io.brine.store.keys;

import io.brine.daemon.files.AtomicFiles;
import io.brine.protocol.MinionIds;
import io.brine.protocol.crypto.Pem;
import java.io.IOException;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Path;
import java.security.KeyPair;

/** A key pair as two files, {@code NAME.pem} and {@code NAME.pub}, written the key store's way. */
public final class KeyPairFiles {

    private KeyPairFiles() {}

    /**
     * Writes {@code dir/NAME.pem} (PKCS#1, mode 0400) and {@code dir/NAME.pub} (SPKI, mode 0644), each through a
     * forced temp file, never through a link, and never over an existing file.
     *
     * @throws FileAlreadyExistsException if either file (or a link by that name) exists; nothing is written then
     * @throws io.brine.protocol.InvalidIdException if {@code name} is not a valid id
     */
    public static void writeNew(Path dir, String name, KeyPair pair) throws IOException {
        MinionIds.requireValid(name);
        String privateName = name + ".pem";
        String publicName = name + ".pub";
        for (String file : new String[] {privateName, publicName}) {
            if (AtomicFiles.attributes(dir.resolve(file)).isPresent()) {
                throw new FileAlreadyExistsException(dir.resolve(file).toString(), null, "already exists");
            }
        }
        AtomicFiles.create(
                dir.resolve(privateName), Pem.bytes(Pem.privateKeyPkcs1(pair.getPrivate())), AtomicFiles.OWNER_READ);
        AtomicFiles.create(
                dir.resolve(publicName), Pem.bytes(Pem.publicKeySpki(pair.getPublic())), AtomicFiles.PUBLIC_READ);
    }
}
