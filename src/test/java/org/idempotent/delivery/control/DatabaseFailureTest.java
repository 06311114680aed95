package org.idempotent.delivery.control;

import static org.assertj.core.api.Assertions.assertThat;

import jakarta.persistence.PersistenceException;
import java.sql.SQLException;
import org.idempotent.delivery.control.DatabaseFailure.Kind;
import org.idempotent.delivery.entity.ProcessedEvent;
import org.idempotent.delivery.entity.Rejection.Reason;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.postgresql.util.PSQLException;
import org.postgresql.util.ServerErrorMessage;

class DatabaseFailureTest {

    @ParameterizedTest(name = "{0} {1} -> {2}")
    @CsvSource(
            nullValues = "-",
            value = {
                "23505, processed_events_pkey, DEDUP_KEY",
                "23505, processed_events_v7_d20261204_pkey, DEDUP_KEY",
                "23505, processed_events_other_pkey, DEDUP_KEY",
                "23505, processed_events_v7_d2026_pkey, PERMANENT",
                "23505, payment_announcements_20261204_pkey, PERMANENT",
                "23505, accounts_pkey,         PERMANENT",
                "23505, -,                     PERMANENT",
                "23514, accounts_id_format,    PERMANENT",
                "23503, some_fkey,             PERMANENT",
                "22003, -,                     PERMANENT",
                "22P02, -,                     PERMANENT",
                "08006, -,                     TRANSIENT",
                "08001, -,                     TRANSIENT",
                "53300, -,                     TRANSIENT",
                "57P01, -,                     TRANSIENT",
                "40001, -,                     TRANSIENT",
                "40P01, -,                     TRANSIENT",
                "25006, -,                     TRANSIENT",
                "25P03, -,                     TRANSIENT",
                "25P02, -,                     UNCLASSIFIED",
                "42P01, -,                     UNCLASSIFIED",
                "XX000, -,                     UNCLASSIFIED",
            })
    void failureIsSortedBySqlStateAndTheDedupKeyByItsConstraintName(String state, String constraint, Kind kind) {
        var failure = new PersistenceException(
                "flush failed", new RuntimeException("DatabaseException", serverError(state, constraint)));

        assertThat(DatabaseFailure.of(failure).kind()).isEqualTo(kind);
    }

    @Test
    void aUniqueViolationWithoutTheDedupKeysNameIsNeverADuplicate() {
        // 23505 alone, as a driver or wrapper without the server's fields would report it.
        var plain = new PersistenceException(new SQLException("duplicate key value", "23505"));

        assertThat(DatabaseFailure.of(plain).isDedupKey()).isFalse();
        assertThat(DatabaseFailure.of(serverError("23505", "payments_reference_key"))
                        .isDedupKey())
                .isFalse();
        assertThat(DatabaseFailure.of(serverError("23505", ProcessedEvent.DEDUP_KEY))
                        .isDedupKey())
                .isTrue();
    }

    @Test
    void aFailureWithoutSqlStateIsUnclassifiedNotPermanent() {
        assertThat(DatabaseFailure.of(new PersistenceException("no cause")).kind())
                .isEqualTo(Kind.UNCLASSIFIED);
        assertThat(DatabaseFailure.of(new SQLException("no state")).kind()).isEqualTo(Kind.UNCLASSIFIED);
    }

    @Test
    void anOverflowingBalanceIsRejectedAsAmountOutOfRange() {
        var overflow = DatabaseFailure.of(serverError("22003", null));

        assertThat(overflow.rejection().reason()).isEqualTo(Reason.AMOUNT_OUT_OF_RANGE);
        assertThat(overflow.rejection().detail()).contains("22003");
        assertThat(DatabaseFailure.of(serverError("23514", "accounts_id_format"))
                        .rejection()
                        .reason())
                .isEqualTo(Reason.REFUSED_BY_DATABASE);
    }

    private static PSQLException serverError(String state, String constraint) {
        String fields = "SERROR\0C" + state + "\0Mfailed" + (constraint == null ? "" : "\0n" + constraint) + "\0";
        return new PSQLException(new ServerErrorMessage(fields));
    }
}
