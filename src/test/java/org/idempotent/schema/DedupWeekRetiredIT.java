package org.idempotent.schema;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.idempotent.fixtures.Jdbc.single;
import static org.idempotent.fixtures.Jdbc.update;
import static org.idempotent.fixtures.Jdbc.uuid7;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Instant;
import java.time.LocalDate;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.idempotent.delivery.entity.ProcessedEvent;
import org.idempotent.stack.Database;
import org.idempotent.stack.Settings;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.postgresql.util.PSQLException;

/**
 * A table by week, as the version before wrote it, migrated by this version (V14__dedup_week_retired.sql) to the layout
 * DEDUP_PARTITIONING names: every record kept with its time, fingerprint and kind (so kept as long as that layout keeps
 * a record, and still refusing a copy of its event), the week layout's functions and left-over tables gone, rights
 * unchanged.
 */
class DedupWeekRetiredIT {

    private static final String MIGRATIONS = "filesystem:src/main/resources/db/migration";
    private static final LocalDate TODAY = LocalDate.now(ZoneOffset.UTC);
    private static final List<String> WEEK_FUNCTIONS = List.of(
            "processed_events_weeks_ahead()",
            "processed_events_drop_detached()",
            "processed_events_detach_week(text, interval)",
            "processed_events_expired_weeks(interval)",
            "processed_events_partition(date)",
            "processed_events_create_by_week()");

    /** A record as the version before wrote it: its ID claimed, then placed on the day the event occurred. */
    private record Written(UUID eventId, LocalDate eventDay, String kind) {}

    @ParameterizedTest(name = "to {0}")
    @ValueSource(strings = {"none", "id"})
    void aTableByWeekIsConvertedKeepingEveryRecordAndItsRefusalOfACopy(String layout) throws SQLException {
        Settings settings = Settings.fromEnvironment().with("DB_NAME", "payments_it_week_to_" + layout);
        Database.recreate(settings);
        Database.migrate(settings, MIGRATIONS, "13", Map.of("dedupPartitioning", "week", "dedupLayout", "week"));
        List<Written> written = List.of(
                new Written(UUID.randomUUID(), TODAY, "payment"),
                new Written(uuid7(TODAY.atTime(0, 1).toInstant(ZoneOffset.UTC)), TODAY, "refund"),
                // No week partition that far back: the default partition's.
                new Written(
                        uuid7(TODAY.minusDays(20).atStartOfDay().toInstant(ZoneOffset.UTC)),
                        TODAY.minusDays(20),
                        "payment"),
                new Written(UUID.randomUUID(), TODAY.minusDays(20), "payment"));
        List<List<Object>> before;
        try (Connection owner = Database.connect(settings);
                Connection app = Database.connectAsApplication(settings)) {
            for (Written record : written) {
                assertThat(single(app, "SELECT processed_event_claim(?)", record.eventId()))
                        .isEqualTo(true);
                update(
                        app,
                        "INSERT INTO processed_events (event_id, event_day, kind, fingerprint) VALUES (?, ?, ?, ?)",
                        record.eventId(),
                        record.eventDay(),
                        record.kind(),
                        HexFormat.of().parseHex("0a0b"));
            }
            // A week a purge detached and did not get to drop.
            single(owner, "SELECT processed_events_partition(?)", TODAY.minusDays(60));
            String leftOver = (String) single(
                    owner,
                    "SELECT min(relname::text) FROM pg_class"
                            + " WHERE relname ~ '^processed_events_p[0-9]{8}$' AND relkind = 'r'");
            update(owner, "ALTER TABLE processed_events DETACH PARTITION " + leftOver);
            before = records(owner);
        }

        Database.migrate(settings.with("DEDUP_PARTITIONING", layout), MIGRATIONS, null);

        try (Connection owner = Database.connect(settings);
                Connection app = Database.connectAsApplication(settings)) {
            assertThat(records(owner))
                    .as("every record, with its time, fingerprint and kind")
                    .isEqualTo(before);
            assertThat(single(
                            owner,
                            "SELECT coalesce((SELECT partstrat::text FROM pg_partitioned_table"
                                    + " WHERE partrelid = 'processed_events'::regclass), 'none')"))
                    .isEqualTo(layout.equals("id") ? "l" : "none");
            for (Written record : written) {
                assertThatThrownBy(() -> update(
                                app,
                                "INSERT INTO processed_events (event_id, id_version) VALUES (?, ?)",
                                record.eventId(),
                                (short) record.eventId().version()))
                        .as("a copy of %s delivered after the conversion", record)
                        .isInstanceOfSatisfying(
                                PSQLException.class,
                                e -> assertThat(ProcessedEvent.isDedupKey(
                                                e.getServerErrorMessage().getConstraint()))
                                        .isTrue());
            }
            UUID fresh = uuid7(Instant.now());
            assertThat(update(app, "INSERT INTO processed_events (event_id, id_version) VALUES (?, 7)", fresh))
                    .isEqualTo(1);
            assertThat(update(app, "DELETE FROM processed_events WHERE event_id = ?", fresh))
                    .isEqualTo(1);
            for (String function : WEEK_FUNCTIONS) {
                assertThat(single(owner, "SELECT to_regprocedure(?)::text", function))
                        .as(function)
                        .isNull();
            }
            assertThat(single(
                            owner,
                            "SELECT count(*) FROM pg_class WHERE relname ~ '^processed_events_(p[0-9]{8}"
                                    + "|default|legacy|by_week)$'"))
                    .as("the week layout's tables, attached or left detached")
                    .isEqualTo(0L);
        }
    }

    private static List<List<Object>> records(Connection owner) throws SQLException {
        List<List<Object>> rows = new ArrayList<>();
        try (PreparedStatement query = owner.prepareStatement(
                        "SELECT event_id, processed_at, encode(fingerprint, 'hex'), kind FROM processed_events"
                                + " ORDER BY event_id");
                ResultSet row = query.executeQuery()) {
            while (row.next()) {
                rows.add(List.of(row.getObject(1), row.getObject(2), row.getString(3), row.getString(4)));
            }
        }
        return rows;
    }
}
