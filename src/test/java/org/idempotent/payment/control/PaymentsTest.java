package org.idempotent.payment.control;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

class PaymentsTest {

    @Test
    void guardedUpsertComparesWithIsDistinctFromSoThatANullLastEventStillApplies() {
        assertThat(Payments.GUARDED_UPSERT)
                .contains("ON CONFLICT (id) DO UPDATE")
                .contains("WHERE accounts.last_event_id IS DISTINCT FROM EXCLUDED.last_event_id")
                .doesNotContain("!=");
    }
}
