package io.brine.keytool;

import java.io.Console;

/** The user's terminal, if there is one: injected so tests can answer prompts and pretend to be a pipe. */
public interface Terminal {

    /** Whether a person can be asked to confirm (stdin and stdout are a terminal). */
    boolean interactive();

    /** Whether stdout is a terminal that shows colour. */
    boolean colour();

    /** Asks {@code prompt} and returns the answer; null at end of input. */
    String readLine(String prompt);

    /** The process's terminal: {@link System#console()}. */
    static Terminal system() {
        Console console = System.console();
        return new Terminal() {
            @Override
            public boolean interactive() {
                return console != null;
            }

            @Override
            public boolean colour() {
                return console != null;
            }

            @Override
            public String readLine(String prompt) {
                return console == null ? null : console.readLine("%s", prompt);
            }
        };
    }
}
