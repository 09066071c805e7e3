package io.brine.keytool;

import io.brine.protocol.MinionIds;
import io.brine.store.audit.AuditLog;
import io.brine.store.keys.InvalidEntries;
import io.brine.store.keys.KeyStoreException;
import java.io.IOException;
import java.io.PrintWriter;
import java.nio.file.Path;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * {@code brine-key --clean}: lists the entries of the state directories that are not key files, with the reason,
 * asks (default no), then moves them aside under the store lock ({@link InvalidEntries}), audited. Moved, not
 * deleted: a misnamed file may be a key filed by hand, and the admin may want it back.
 */
final class CleanCommand {

    private final BrineKey command;
    private final Output output;
    private final ChangeKeys changes;

    CleanCommand(BrineKey command, Output output, ChangeKeys changes) {
        this.command = command;
        this.output = output;
        this.changes = changes;
    }

    int run(KeytoolConfig config) {
        if (config.cluster().isPresent()) {
            throw UserError.usage("--clean works on a pki dir; with cluster: the keys are in ZooKeeper, where"
                    + " nothing but valid keys is stored");
        }
        KeytoolConfig.requireLooksLikePkiDir(config.pkiDir());
        List<InvalidEntries.Entry> found;
        try {
            found = InvalidEntries.find(config.pkiDir());
        } catch (KeyStoreException e) {
            throw UserError.usage(e.getMessage());
        } catch (IOException e) {
            throw UserError.usage("cannot read the pki dir " + config.pkiDir() + ": " + BrineKey.describe(e));
        }
        PrintWriter err = output.err();
        if (found.isEmpty()) {
            if (!command.quiet()) {
                err.println("brine-key: every entry of the state directories of " + config.pkiDir()
                        + " is a key file; nothing to clean");
            }
            err.flush();
            return output.text() ? 0 : output.printStructured(document(List.of(), null, List.of()));
        }
        PrintWriter out = output.out();
        out.println("Not key files (to be moved to " + config.pkiDir().resolve(InvalidEntries.DIR_NAME) + "/):");
        for (InvalidEntries.Entry entry : found) {
            out.println("  " + entry.file() + ": " + entry.reason());
        }
        out.flush();
        if (!command.yes() && !changes.confirm(false, "moved")) {
            return UserError.REFUSED;
        }
        AuditLog audit = command.openAudit(config);
        InvalidEntries.Outcome outcome;
        try {
            outcome = InvalidEntries.moveAside(config.pkiDir(), found, audit, command.actor(), Instant.now());
        } catch (KeyStoreException e) {
            throw UserError.usage(e.getMessage());
        } catch (IOException e) {
            err.println("brine-key: cannot move the invalid entries: " + BrineKey.describe(e)
                    + "; those not said moved above are where they were");
            err.flush();
            return UserError.REFUSED;
        } finally {
            audit.close();
        }
        for (InvalidEntries.Entry entry : outcome.moved()) {
            if (!command.quiet()) {
                err.println("brine-key: moved " + entry.file() + " to "
                        + MinionIds.printable(outcome.destination()
                                .resolve(entry.state().dirName())
                                .resolve(entry.name())
                                .toString()));
            }
        }
        outcome.left().forEach(line -> err.println("brine-key: " + line));
        if (!outcome.unaudited().isEmpty()) {
            err.println("brine-key: warning: not written to the audit log: " + String.join(", ", outcome.unaudited()));
        }
        err.flush();
        int exit = outcome.left().isEmpty() ? 0 : UserError.REFUSED;
        if (!output.text()) {
            int printed = output.printStructured(document(outcome.moved(), outcome.destination(), outcome.left()));
            return exit == 0 ? printed : exit;
        }
        return exit;
    }

    private static Map<String, Object> document(List<InvalidEntries.Entry> moved, Path destination, List<String> left) {
        Map<String, Object> document = new LinkedHashMap<>();
        List<Map<String, String>> entries = new ArrayList<>();
        for (InvalidEntries.Entry entry : moved) {
            entries.add(Map.of("file", entry.file(), "reason", entry.reason()));
        }
        document.put("moved", entries);
        document.put("moved_to", destination == null ? null : destination.toString());
        document.put("left", left);
        return document;
    }
}
