package io.brine.keytool;

import io.brine.protocol.MinionIds;
import io.brine.protocol.crypto.Fingerprints;
import io.brine.protocol.targeting.Glob;
import io.brine.protocol.targeting.TargetException;
import io.brine.store.keys.KeyState;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.List;
import java.util.Locale;
import java.util.Set;

/**
 * The one thing a brine-key run does, chosen from its options: salt-key's {@code -L}, {@code -l STATE}, {@code -a},
 * {@code -A}, ... (two actions at once are a usage error).
 *
 * @param option   the option that asked for it, for messages
 * @param argument the GLOB (a comma-separated list), or null
 * @param states   the states a listing shows
 * @param all      every key (the capital-letter options), not a glob's
 */
record Action(Kind kind, String option, String argument, Set<KeyState> states, boolean all) {

    enum Kind {
        LIST,
        ACCEPT,
        REJECT,
        DELETE,
        PRINT,
        FINGER,
        GEN_KEYS,
        ROTATE,
        CLEAN,
        ROTATE_MASTER_KEY,
        ROTATE_KEYS,
        SIGN_MASTER_KEY,
        MASTER_PUBKEY_SIGNATURE
    }

    /** The one action the options ask for; listing all keys when none. */
    static Action of(BrineKey options) {
        List<Action> actions = new ArrayList<>();
        Set<KeyState> all = EnumSet.allOf(KeyState.class);
        if (options.listAll) {
            actions.add(new Action(Kind.LIST, "-L", null, all, true));
        }
        if (options.list != null) {
            actions.add(new Action(Kind.LIST, "-l", options.list, listStates(options.list), true));
        }
        addIfSet(actions, options.accept, options.acceptAll, Kind.ACCEPT, "-a", "-A");
        addIfSet(actions, options.reject, options.rejectAll, Kind.REJECT, "-r", "-R");
        addIfSet(actions, options.delete, options.deleteAll, Kind.DELETE, "-d", "-D");
        addIfSet(actions, options.print, options.printAll, Kind.PRINT, "-p", "-P");
        boolean fingerBinds =
                options.finger != null && (options.accept != null || options.reject != null || options.delete != null);
        addIfSet(actions, fingerBinds ? null : options.finger, options.fingerAll, Kind.FINGER, "-f", "-F");
        if (options.genKeys != null) {
            actions.add(new Action(Kind.GEN_KEYS, "--gen-keys", options.genKeys, all, false));
        }
        if (options.rotate) {
            actions.add(new Action(Kind.ROTATE, "--rotate", null, all, true));
        }
        if (options.clean) {
            actions.add(new Action(Kind.CLEAN, "--clean", null, all, true));
        }
        if (options.rotateMasterKey) {
            actions.add(new Action(Kind.ROTATE_MASTER_KEY, "--rotate-master-key", null, all, true));
        }
        if (options.rotateKeys != null) {
            actions.add(new Action(
                    Kind.ROTATE_KEYS, "--rotate-keys", options.rotateKeys, EnumSet.allOf(KeyState.class), false));
        }
        if (options.signMasterKey != null) {
            actions.add(new Action(
                    Kind.SIGN_MASTER_KEY, "--sign-master-key", options.signMasterKey.toString(), all, false));
        }
        if (options.masterPubkeySignature) {
            actions.add(new Action(Kind.MASTER_PUBKEY_SIGNATURE, "--master-pubkey-signature", null, all, true));
        }
        if (actions.size() > 1) {
            throw UserError.usage("choose one action; got "
                    + String.join(" and ", actions.stream().map(Action::option).toList()));
        }
        return actions.isEmpty() ? new Action(Kind.LIST, "-L", null, all, true) : actions.get(0);
    }

    private static void addIfSet(
            List<Action> actions, String glob, boolean all, Kind kind, String option, String allOption) {
        if (glob != null) {
            actions.add(new Action(kind, option, glob, EnumSet.allOf(KeyState.class), false));
        }
        if (all) {
            actions.add(new Action(kind, allOption, "*", EnumSet.allOf(KeyState.class), true));
        }
    }

    private static Set<KeyState> listStates(String value) {
        return switch (value.toLowerCase(Locale.ROOT)) {
            case "pre", "un", "unaccepted" -> EnumSet.of(KeyState.PENDING);
            case "acc", "accepted" -> EnumSet.of(KeyState.ACCEPTED);
            case "rej", "rejected" -> EnumSet.of(KeyState.REJECTED);
            case "den", "denied" -> EnumSet.of(KeyState.DENIED);
            case "all" -> EnumSet.allOf(KeyState.class);
            default ->
                throw UserError.usage("-l " + MinionIds.printable(value) + ": expected one of pre, un,"
                        + " unaccepted, acc, accepted, rej, rejected, den, denied, all");
        };
    }

    /** The fingerprint {@code --finger} binds an accept, reject or delete to; null when not bound. */
    String boundFingerprint(String finger) {
        boolean changes = kind == Kind.ACCEPT || kind == Kind.REJECT || kind == Kind.DELETE;
        if (finger == null || !changes) {
            return null;
        }
        if (all || argument.contains(",") || !Glob.isLiteral(argument)) {
            throw UserError.usage("--finger FP binds " + option + " to one key: give a single id, not "
                    + (all ? "all keys" : "a glob or list"));
        }
        String normalized = Fingerprints.normalize(finger);
        if (normalized == null) {
            throw UserError.usage("--finger " + MinionIds.printable(finger) + " is not a fingerprint (expected 32"
                    + " colon-separated hex bytes, as brine-key -f prints)");
        }
        return normalized;
    }

    /**
     * A comma-separated list of globs on ids; each is checked strictly ({@link Glob#compileIds}), so a typo is an
     * error rather than a glob that matches nothing.
     */
    static List<Glob> globs(String text) {
        List<Glob> globs = new ArrayList<>();
        for (String item : text.split(",", -1)) {
            if (item.isBlank()) {
                throw UserError.usage("empty glob in the list; separate ids or globs with single commas");
            }
            try {
                globs.add(Glob.compileIds(item.strip()));
            } catch (TargetException e) {
                throw UserError.usage(e.getMessage());
            }
        }
        return List.copyOf(globs);
    }
}
