package io.brine.store.keys;

import io.brine.store.audit.AuditLog;
import java.nio.file.Path;
import java.time.Duration;

/** {@link KeyStoreContract} on the filesystem store; the other store is another process's (brine-key's). */
class FileKeyStoreContractTest extends KeyStoreContract {

    @Override
    protected KeyStore open(Path pkiDir, AuditLog audit) throws Exception {
        return FileKeyStore.open(KeyStoreOptions.builder(pkiDir).auditLog(audit).masterKey(false)
                .pollInterval(Duration.ofMillis(50)).build());
    }
}
