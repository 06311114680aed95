package org.idempotent.schema.entity;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;

class DedupLayoutTest {

    @Test
    void theRetiredWeekIsRefusedSayingWhatBecomesOfATableByWeek() {
        assertThatThrownBy(() -> DedupLayout.of("week"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("retired")
                .hasMessageContaining("V14__dedup_week_retired.sql");
    }

    @Test
    void anUnknownLayoutIsRefusedNamingTheTwoThereAre() {
        assertThatThrownBy(() -> DedupLayout.of("month")).hasMessage("DEDUP_PARTITIONING=month is neither none nor id");
    }

    @Test
    void theMigrationsAreToldTheLayoutAndNeverToInstallByWeek() {
        assertThat(DedupLayout.of("id").placeholders()).containsEntry("dedupLayout", "id");
        assertThat(DedupLayout.of("none").placeholders()).containsEntry("dedupPartitioning", "none");
        assertThat(DedupLayout.of("id").placeholders()).containsEntry("dedupPartitioning", "none");
    }
}
