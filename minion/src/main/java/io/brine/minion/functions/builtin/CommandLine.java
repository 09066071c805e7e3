package io.brine.minion.functions.builtin;

import java.util.ArrayList;
import java.util.List;

/**
 * Splits a command line into argv the way a POSIX shell splits words, and does nothing else a shell does: single
 * quotes keep everything literally, double quotes keep everything but {@code \"}, {@code \\}, {@code \$} and
 * {@code \`}, a backslash outside quotes escapes the next character. There is no globbing, no variable or command
 * substitution, no pipes, no redirection, no {@code ;}: those characters are ordinary word characters. That is the
 * point of {@code cmd.run} without {@code shell=true}: what the publisher sent is what runs.
 */
final class CommandLine {

    private CommandLine() {}

    /**
     * @throws IllegalArgumentException for an unterminated quote, a trailing backslash or an empty command
     */
    static List<String> split(String line) {
        List<String> words = new ArrayList<>();
        StringBuilder word = null; // null between words, so that '' still makes an (empty) word
        int i = 0;
        int n = line.length();
        while (i < n) {
            char c = line.charAt(i);
            if (c == ' ' || c == '\t' || c == '\n' || c == '\r') {
                if (word != null) {
                    words.add(word.toString());
                    word = null;
                }
                i++;
                continue;
            }
            if (c == '\\' && i + 1 < n && line.charAt(i + 1) == '\n') {
                i += 2; // line continuation
                continue;
            }
            if (word == null) {
                word = new StringBuilder();
            }
            switch (c) {
                case '\\' -> {
                    if (i + 1 >= n) {
                        throw new IllegalArgumentException("the command ends with a lone backslash");
                    }
                    word.append(line.charAt(i + 1));
                    i += 2;
                }
                case '\'' -> {
                    int close = line.indexOf('\'', i + 1);
                    if (close < 0) {
                        throw new IllegalArgumentException("unterminated single quote at position " + i);
                    }
                    word.append(line, i + 1, close);
                    i = close + 1;
                }
                case '"' -> i = doubleQuoted(line, i, word);
                default -> {
                    word.append(c);
                    i++;
                }
            }
        }
        if (word != null) {
            words.add(word.toString());
        }
        if (words.isEmpty()) {
            throw new IllegalArgumentException("the command is empty");
        }
        return words;
    }

    /** Appends the double-quoted string opening at {@code open}; returns the index after its closing quote. */
    private static int doubleQuoted(String line, int open, StringBuilder word) {
        int i = open + 1;
        while (i < line.length()) {
            char c = line.charAt(i);
            if (c == '"') {
                return i + 1;
            }
            if (c == '\\' && i + 1 < line.length()) {
                char next = line.charAt(i + 1);
                if (next == '"' || next == '\\' || next == '$' || next == '`') {
                    word.append(next);
                    i += 2;
                    continue;
                }
                if (next == '\n') {
                    i += 2;
                    continue;
                }
            }
            word.append(c);
            i++;
        }
        throw new IllegalArgumentException("unterminated double quote at position " + open);
    }
}
