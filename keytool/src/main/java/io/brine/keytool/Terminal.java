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
        boolean terminal = isTerminal(console);
        return new Terminal() {
            @Override
            public boolean interactive() {
                return terminal;
            }

            @Override
            public boolean colour() {
                return terminal;
            }

            @Override
            public String readLine(String prompt) {
                return console == null ? null : console.readLine("%s", prompt);
            }
        };
    }

    /**
     * JDK 17 has a console only when stdin and stdout are a terminal; from JDK 22 there may be one anyway, and
     * {@code Console.isTerminal()} (looked up reflectively, as it is not in 17) tells.
     */
    private static boolean isTerminal(Console console) {
        if (console == null) {
            return false;
        }
        try {
            return (Boolean) Console.class.getMethod("isTerminal").invoke(console);
        } catch (NoSuchMethodException e) {
            return true;
        } catch (ReflectiveOperationException | RuntimeException e) {
            return false;
        }
    }
}
