package org.idempotent.schema;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.DayOfWeek;
import java.time.LocalDate;
import java.time.ZoneOffset;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.idempotent.fixtures.Jdbc;
import org.idempotent.stack.Commands;
import org.idempotent.stack.Database;
import org.idempotent.stack.Settings;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * An installed, unpartitioned processed_events converted by server-config/convert-dedup-to-weeks.sql, as operations.md
 * tells its owner to: every record kept and still counted, new records placed by week, rights unchanged.
 */
class DedupConversionIT {

    private static final Settings SETTINGS = Settings.fromEnvironment().with("DB_NAME", "payments_it_convert");
    private static final List<UUID> RECORDED = List.of(UUID.randomUUID(), UUID.randomUUID(), UUID.randomUUID());
    private static String secondRun;

    @BeforeAll
    static void installedUnpartitionedThenConverted() throws SQLException {
        Database.recreate(SETTINGS);
        Database.migrate(
                SETTINGS.with("DEDUP_PARTITIONING", "none"), "filesystem:src/main/resources/db/migration", null);
        try (Connection app = Database.connectAsApplication(SETTINGS)) {
            for (UUID eventId : RECORDED) {
                update(app, "INSERT INTO processed_events (event_id) VALUES (?)", eventId);
            }
        }
        convert();
        try {
            convert();
        } catch (IllegalStateException refused) {
            secondRun = refused.getMessage();
        }
    }

    @Test
    void everyRecordIsKeptInTheLegacyPartitionAndStillCounts() throws SQLException {
        try (Connection app = Database.connectAsApplication(SETTINGS)) {
            assertThat(single(app, "SELECT count(*) FROM processed_events_legacy"))
                    .isEqualTo(3L);
            for (UUID eventId : RECORDED) {
                assertThat(single(app, "SELECT processed_event_claim(?)", eventId))
                        .as("claim of a record made before the conversion")
                        .isEqualTo(false);
            }
            assertThat(single(app, "SELECT processed_event_claim(?)", UUID.randomUUID()))
                    .isEqualTo(true);
        }
    }

    @Test
    void theTableIsPartitionedByWeekAndTheApplicationRoleWritesAndPurgesIt() throws SQLException {
        LocalDate today = LocalDate.now(ZoneOffset.UTC);
        try (Connection app = Database.connectAsApplication(SETTINGS)) {
            assertThat(single(
                            app,
                            "SELECT count(*) FROM pg_partitioned_table WHERE partrelid = 'processed_events'"
                                    + "::regclass"))
                    .isEqualTo(1L);
            UUID eventId = UUID.randomUUID();
            update(app, "INSERT INTO processed_events (event_id, event_day) VALUES (?, ?)", eventId, today);
            assertThat(single(app, "SELECT tableoid::regclass::text FROM processed_events WHERE event_id = ?", eventId))
                    .isEqualTo("processed_events_p"
                            + today.with(DayOfWeek.MONDAY).toString().replace("-", ""));
            assertThat(update(app, "DELETE FROM processed_events_legacy WHERE event_id = ?", RECORDED.get(0)))
                    .as("the purge's batches on the legacy partition")
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
                "server-config/convert-dedup-to-weeks.sql",
                "postgresql://" + user + ":" + password + "@" + SETTINGS.get("DB_HOST") + ":" + SETTINGS.get("DB_PORT")
                        + "/" + SETTINGS.get("DB_NAME"));
    }

    private static Object single(Connection connection, String query, Object... parameters) throws SQLException {
        try (PreparedStatement statement = Jdbc.prepare(connection, query, parameters);
                ResultSet row = statement.executeQuery()) {
            row.next();
            return row.getObject(1);
        }
    }

    private static int update(Connection connection, String sql, Object... parameters) throws SQLException {
        try (PreparedStatement statement = Jdbc.prepare(connection, sql, parameters)) {
            return statement.executeUpdate();
        }
    }
}
