package io.brine.minion.functions.builtin;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;

class CommandLineTest {

    @Test
    void splitsOnWhitespaceOnly() {
        assertThat(CommandLine.split("  ls\t-l   /tmp \n")).containsExactly("ls", "-l", "/tmp");
    }

    @Test
    void shellSyntaxIsJustCharacters() {
        assertThat(CommandLine.split("echo a; rm -rf * | cat $HOME && `id` > /x"))
                .containsExactly("echo", "a;", "rm", "-rf", "*", "|", "cat", "$HOME", "&&", "`id`", ">", "/x");
    }

    @Test
    void quotesAndBackslashesGroupWordsAsInPosixShells() {
        assertThat(CommandLine.split("printf '%s $x' \"a \\\"b\\\" \\$c \\n\" d\\ e f''g ''"))
                .containsExactly("printf", "%s $x", "a \"b\" $c \\n", "d e", "fg", "");
        assertThat(CommandLine.split("'it'\\''s'")).containsExactly("it's");
        assertThat(CommandLine.split("a\\\nb")).containsExactly("ab");
    }

    @Test
    void unterminatedQuotesAndEmptyCommandsAreErrors() {
        assertThatThrownBy(() -> CommandLine.split("echo 'oops")).hasMessageContaining("unterminated single quote");
        assertThatThrownBy(() -> CommandLine.split("echo \"oops")).hasMessageContaining("unterminated double quote");
        assertThatThrownBy(() -> CommandLine.split("echo \\")).hasMessageContaining("lone backslash");
        assertThatThrownBy(() -> CommandLine.split("   ")).hasMessageContaining("empty");
    }
}
