package io.brine.protocol;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.List;
import org.junit.jupiter.api.Test;

class ReservedIdsTest {

    @Test
    void windowsDeviceNamesAreReservedAsAFirstLabelMasterAndRootAsWholeIds() {
        for (String id : List.of(
                "con",
                "nul",
                "aux",
                "prn",
                "com1",
                "com9",
                "lpt1",
                "lpt9",
                "con.example.com",
                "nul.a.b",
                "master",
                "root")) {
            assertThat(ReservedIds.DEFAULT.problem(id)).as(id).isPresent();
        }
        for (String id : List.of(
                "web1",
                "console",
                "com10",
                "com0",
                "lpt10",
                "icon",
                "a.con",
                "a.con.b",
                "master.example.com",
                "root1",
                "webmaster",
                "nulls.example.com")) {
            assertThat(ReservedIds.DEFAULT.problem(id)).as(id).isEmpty();
        }
        assertThat(ReservedIds.DEFAULT.problem("con.example.com"))
                .contains("id con.example.com is reserved (reserved_ids entry con.*): use another id");
    }

    @Test
    void anEmptyListReservesNothingAndAnEntryIsAnIdWithAnOptionalTail() {
        assertThat(ReservedIds.NONE.match("con")).isEmpty();
        assertThat(ReservedIds.of(List.of("db.internal.*")).match("db.internal.x"))
                .contains("db.internal.*");
        assertThat(ReservedIds.of(List.of("db.internal.*")).match("db.internalx"))
                .isEmpty();
        for (String bad : List.of("*", "con*", "*.con", "CON", "con.", "", ".*", "con.*.*")) {
            assertThat(ReservedIds.entryProblem(bad)).as(bad).isPresent();
        }
        assertThatThrownBy(() -> ReservedIds.of(List.of("Con"))).isInstanceOf(IllegalArgumentException.class);
    }
}
