package org.idempotent.payment.control;

import static org.assertj.core.api.Assertions.assertThat;

import jakarta.persistence.PersistenceException;
import java.sql.SQLException;
import org.junit.jupiter.api.Test;

class PaymentProcessorTest {

    @Test
    void uniqueViolationIsFoundDeepInTheCauseChain() {
        var failure = new PersistenceException("flush failed",
                new RuntimeException("DatabaseException", new SQLException("duplicate key", "23505")));

        assertThat(PaymentProcessor.isUniqueViolation(failure)).isTrue();
    }

    @Test
    void otherDatabaseErrorsAreNotDuplicates() {
        var serialization = new PersistenceException(new SQLException("could not serialize", "40001"));
        var connectionLost = new PersistenceException(new SQLException("connection refused", "08001"));

        assertThat(PaymentProcessor.isUniqueViolation(serialization)).isFalse();
        assertThat(PaymentProcessor.isUniqueViolation(connectionLost)).isFalse();
        assertThat(PaymentProcessor.isUniqueViolation(new PersistenceException("no cause"))).isFalse();
    }

    @Test
    void guardedUpsertComparesWithIsDistinctFromSoThatANullLastEventStillApplies() {
        assertThat(PaymentProcessor.GUARDED_UPSERT)
                .contains("ON CONFLICT (id) DO UPDATE")
                .contains("WHERE accounts.last_event_id IS DISTINCT FROM EXCLUDED.last_event_id")
                .doesNotContain("!=");
    }
}
