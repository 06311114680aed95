package org.idempotent.delivery.entity;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
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

    @Test
    void aRecordCarriesItsIdsVersionTheKeyOfTheTableById() {
        UUID v7 = UUID.fromString("019ae8f0-8c00-7abc-8def-0123456789ab");

        assertThat(new ProcessedEvent(new PaymentEvent(v7, "acct-1", 500), "payment").idVersion())
                .isEqualTo((short) 7);
        assertThat(new ProcessedEvent(new PaymentEvent(ID, "acct-1", 500), "payment").idVersion())
                .isEqualTo((short) 4);
    }

    @Test
    void aViolationOfAnyPartitionsKeyIsTheDedupKeysAndOfNoOtherConstraint() {
        assertThat(List.of(
                        "processed_events_pkey",
                        "processed_events_v7_d20261205_pkey",
                        "processed_events_v7_default_pkey",
                        "processed_events_other_pkey"))
                .allMatch(ProcessedEvent::isDedupKey);
        assertThat(List.of(
                        "processed_events_kind_format",
                        "processed_events_id_version",
                        "processed_events_v7_pkey_other",
                        "processed_events_p20261130_pkey",
                        "processed_events_default_pkey",
                        "payments_pkey"))
                .noneMatch(ProcessedEvent::isDedupKey);
    }
}
