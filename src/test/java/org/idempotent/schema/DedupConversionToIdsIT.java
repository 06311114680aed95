package org.idempotent.schema;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.idempotent.fixtures.Jdbc.single;
import static org.idempotent.fixtures.Jdbc.update;
import static org.idempotent.fixtures.Jdbc.uuid7;

import java.sql.Connection;
import java.sql.SQLException;
import java.time.Instant;
import java.time.LocalDate;
import java.time.ZoneOffset;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.idempotent.delivery.entity.ProcessedEvent;
import org.idempotent.stack.Commands;
import org.idempotent.stack.Database;
import org.idempotent.stack.Settings;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.postgresql.util.PSQLException;

/**
 * An installed, unpartitioned processed_events converted by server-config/convert-dedup-to-ids.sql, as operations.md
 * tells its owner to: every record kept in its place (a v7 ID in its day's partition, a v4 ID with the other
 * versions), each still refusing a copy of its event, rights unchanged.
 */
class DedupConversionToIdsIT {

    private static final Settings SETTINGS = Settings.fromEnvironment().with("DB_NAME", "payments_it_convert_ids");
    private static final LocalDate THREE_DAYS_AGO =
            LocalDate.now(ZoneOffset.UTC).minusDays(3);
    private static final UUID V4 = UUID.randomUUID();
    private static final UUID V7 = uuid7(THREE_DAYS_AGO.atTime(12, 0).toInstant(ZoneOffset.UTC));
    private static String secondRun;

    @BeforeAll
    static void installedUnpartitionedThenConverted() throws SQLException {
        Database.recreate(SETTINGS);
        Database.migrate(
                SETTINGS.with("DEDUP_PARTITIONING", "none"), "filesystem:src/main/resources/db/migration", null);
        try (Connection app = Database.connectAsApplication(SETTINGS)) {
            // As the product wrote them before V12 (no id_version) and after it.
            update(app, "INSERT INTO processed_events (event_id) VALUES (?)", V4);
            update(app, "INSERT INTO processed_events (event_id, id_version) VALUES (?, 7)", V7);
        }
        convert();
        try {
            convert();
        } catch (IllegalStateException refused) {
            secondRun = refused.getMessage();
        }
    }

    @Test
    void everyRecordIsInItsPlaceAndStillRefusesACopyOfItsEvent() throws SQLException {
        try (Connection app = Database.connectAsApplication(SETTINGS)) {
            assertThat(single(app, "SELECT tableoid::regclass::text FROM processed_events WHERE event_id = ?", V4))
                    .isEqualTo("processed_events_other");
            assertThat(single(app, "SELECT tableoid::regclass::text FROM processed_events WHERE event_id = ?", V7))
                    .isEqualTo(
                            "processed_events_v7_d" + THREE_DAYS_AGO.toString().replace("-", ""));
            for (UUID recorded : List.of(V4, V7)) {
                assertThatThrownBy(() -> update(
                                app,
                                "INSERT INTO processed_events (event_id, id_version) VALUES (?, ?)",
                                recorded,
                                (short) recorded.version()))
                        .isInstanceOfSatisfying(
                                PSQLException.class,
                                e -> assertThat(ProcessedEvent.isDedupKey(
                                                e.getServerErrorMessage().getConstraint()))
                                        .as("a copy of %s refused by the dedup key", recorded)
                                        .isTrue());
            }
        }
    }

    @Test
    void theTableIsPartitionedByIdAndTheApplicationRoleWritesAndPurgesIt() throws SQLException {
        try (Connection app = Database.connectAsApplication(SETTINGS)) {
            assertThat(single(
                            app,
                            "SELECT partstrat::text FROM pg_partitioned_table WHERE partrelid ="
                                    + " 'processed_events'::regclass"))
                    .isEqualTo("l");
            UUID today = uuid7(Instant.now());
            update(app, "INSERT INTO processed_events (event_id, id_version) VALUES (?, 7)", today);
            assertThat(single(app, "SELECT tableoid::regclass::text FROM processed_events WHERE event_id = ?", today))
                    .isEqualTo("processed_events_v7_d"
                            + LocalDate.now(ZoneOffset.UTC).toString().replace("-", ""));
            assertThat(update(app, "DELETE FROM processed_events_other WHERE event_id = ?", V4))
                    .as("the purge's batches on the table of other versions")
                    .isEqualTo(1);
        }
    }

    @Test
    void runAgainItRefusesAndChangesNothing() {
        assertThat(secondRun).contains("processed_events is partitioned already");
    }

    @Test
    void runByAnotherRoleThanTheOwnerItRefuses() {
        assertThatThrownBy(() -> Commands.run(psql(SETTINGS.get("DB_USER"), SETTINGS.get("DB_PASSWORD")), Map.of()))
                .hasMessageContaining("run this as the owner of processed_events");
    }

    private static void convert() {
        Commands.run(psql(SETTINGS.get("DB_OWNER_USER"), SETTINGS.get("DB_OWNER_PASSWORD")), Map.of());
    }

    private static List<String> psql(String user, String password) {
        return List.of(
                "psql",
                "-v",
                "ON_ERROR_STOP=1",
                "-f",
                "server-config/convert-dedup-to-ids.sql",
                "postgresql://" + user + ":" + password + "@" + SETTINGS.get("DB_HOST") + ":" + SETTINGS.get("DB_PORT")
                        + "/" + SETTINGS.get("DB_NAME"));
    }
}
