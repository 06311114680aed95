package org.idempotent.delivery.entity;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.UUID;
import org.idempotent.payment.entity.PaymentEvent;
import org.junit.jupiter.api.Test;

class ProcessedEventTest {

    private static final UUID ID = UUID.fromString("0B7E6C1E-3A51-4C4E-9A59-8F4A5E2B7D10");

    @Test
    void aRecordWithoutFingerprintIsNeverAConflict() {
        PaymentEvent event = new PaymentEvent(ID, "acct-1", 500);
        ProcessedEvent recordedBeforeFingerprints = new ProcessedEvent();

        assertThat(recordedBeforeFingerprints.conflictsWith(event)).isFalse();
        assertThat(new ProcessedEvent(event, "payment").conflictsWith(event)).isFalse();
        assertThat(new ProcessedEvent(event, "payment").conflictsWith(new PaymentEvent(ID, "acct-1", 501)))
                .isTrue();
    }
}
