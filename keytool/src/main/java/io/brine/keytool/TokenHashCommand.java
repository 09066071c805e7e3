package io.brine.keytool;

import io.brine.daemon.config.MasterConfig.AutosignToken;
import io.brine.daemon.config.ValueCheck;
import io.brine.daemon.files.AtomicFiles;
import io.brine.store.policy.TokenHashes;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Path;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParentCommand;
import picocli.CommandLine.Spec;

/** {@code brine-key token-hash}: an autosign_tokens entry for a token, so that nobody hashes one by hand. */
@Command(
        name = "token-hash",
        mixinStandardHelpOptions = true,
        usageHelpAutoWidth = true,
        sortOptions = false,
        header = "Print the master.yaml autosign_tokens entry for a pre-shared token.",
        description = {
            "Reads the token from the first line of standard input (or makes one with --generate) and prints an"
                    + " autosign_tokens entry: a random salt and SHA-256 of the salt followed by the token. Only the"
                    + " entry goes into master.yaml; the token goes into the minion's minion.yaml (autosign_token)."
                    + " Tokens shorter than " + TokenHashes.MIN_TOKEN_LENGTH + " characters are refused.",
        })
final class TokenHashCommand implements Callable<Integer> {

    private static final int MAX_TOKEN_BYTES = 1024;

    @ParentCommand
    BrineKey root;

    @Spec
    CommandSpec spec;

    @Option(
            names = "--match",
            paramLabel = "GLOB",
            defaultValue = "*",
            description = "The minion ids the token is for: an id, or a glob such as 'web*' (default: *).")
    String match;

    @Option(names = "--single-use", description = "The token is spent by its first use.")
    boolean singleUse;

    @Option(
            names = "--generate",
            paramLabel = "FILE",
            description = "Make a random token instead of reading one, and write it to FILE (mode 0600, not over an"
                    + " existing file).")
    Path generate;

    @Override
    public Integer call() {
        ValueCheck.glob().problem(match).ifPresent(problem -> {
            throw UserError.usage("--match: " + problem);
        });
        String token = generate != null ? generated() : read();
        AutosignToken entry = TokenHashes.entry(match, token, singleUse);
        PrintWriter out = spec.commandLine().getOut();
        out.println("- match: '" + entry.match().replace("'", "''") + "'");
        out.println("  salt: " + entry.salt());
        out.println("  sha256: " + entry.sha256());
        if (entry.singleUse()) {
            out.println("  single_use: true");
        }
        out.flush();
        return 0;
    }

    private String generated() {
        String token = TokenHashes.generate();
        try {
            AtomicFiles.create(generate, (token + "\n").getBytes(StandardCharsets.US_ASCII), AtomicFiles.OWNER_RW);
        } catch (FileAlreadyExistsException e) {
            throw new UserError(UserError.REFUSED, generate + " already exists; not overwritten");
        } catch (IOException e) {
            throw new UserError(UserError.REFUSED, "cannot write " + generate + ": " + BrineKey.describe(e));
        }
        return token;
    }

    private String read() {
        // One line, read byte by byte: on a terminal the token ends with Enter, not with end of input.
        ByteArrayOutputStream line = new ByteArrayOutputStream();
        try {
            int b;
            while ((b = root.stdin().read()) >= 0 && b != '\n' && line.size() <= MAX_TOKEN_BYTES) {
                line.write(b);
            }
        } catch (IOException e) {
            throw UserError.usage("cannot read the token from standard input: " + e.getMessage());
        }
        String token = line.toString(StandardCharsets.UTF_8);
        if (token.endsWith("\r")) {
            token = token.substring(0, token.length() - 1);
        }
        if (token.getBytes(StandardCharsets.UTF_8).length > MAX_TOKEN_BYTES) {
            throw UserError.usage("the token is longer than " + MAX_TOKEN_BYTES + " bytes");
        }
        if (token.isEmpty()) {
            throw UserError.usage("no token on standard input (or use --generate FILE)");
        }
        if (token.chars().anyMatch(c -> c < 0x20 || c == 0x7f)) {
            throw UserError.usage("the token has control characters");
        }
        if (token.length() < TokenHashes.MIN_TOKEN_LENGTH) {
            throw UserError.usage("the token has " + token.length() + " characters; at least "
                    + TokenHashes.MIN_TOKEN_LENGTH + " are needed (--generate FILE makes a strong one)");
        }
        return token;
    }
}
