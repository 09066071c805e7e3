package io.brine.protocol.testing;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

class SuiteDefaultsTest {

    @Test
    void junitAppliesTheSuiteDefaultsBeforeAnyTest() {
        assertThat(SuiteDefaults.applied()).isTrue();
    }
}
