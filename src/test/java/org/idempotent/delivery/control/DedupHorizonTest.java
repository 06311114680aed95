package org.idempotent.delivery.control;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.time.Instant;
import java.util.UUID;
import java.util.function.IntSupplier;
import org.idempotent.delivery.entity.Outcome;
import org.idempotent.delivery.entity.Rejection.Reason;
import org.idempotent.payment.entity.PaymentEvent;
import org.idempotent.retention.control.RetentionSettings;
import org.idempotent.retention.entity.RetentionPolicy;
import org.junit.jupiter.api.Test;

class DedupHorizonTest {

    private static final Instant NOW = Instant.parse("2026-12-01T12:00:00Z");
    private static final Duration HORIZON = Duration.ofDays(13);

    private final DedupHorizon horizon = new DedupHorizon();

    DedupHorizonTest() {
        window(() -> 14);
    }

    /** The configured RETENTION_DAYS, as the settings would read it. */
    private void window(IntSupplier days) {
        horizon.retention = new RetentionSettings() {
            @Override
            public Duration window() {
                return Duration.ofDays(days.getAsInt());
            }
        };
    }

    @Test
    void theHorizonIsTheRetentionWindowLessADay() {
        assertThat(horizon.horizon()).isEqualTo(HORIZON);
    }

    @Test
    void aWindowOfADayOrLessDoesNotMakeEveryDeliveryStale() {
        window(() -> 1);

        assertThat(horizon.horizon()).isEqualTo(RetentionPolicy.MARGIN);
        assertThat(horizon.stale(event(NOW.minusSeconds(3600)), NOW.minusSeconds(3600), NOW))
                .isEmpty();
    }

    @Test
    void anUnreadableWindowKeepsTheLastHorizonInsteadOfFailingTheDelivery() {
        assertThat(horizon.horizon()).isEqualTo(HORIZON);
        window(() -> {
            throw new IllegalArgumentException("RETENTION_DAYS=fourteen is not an integer");
        });

        assertThat(horizon.horizon()).isEqualTo(HORIZON);
        assertThat(horizon.stale(event(NOW.minus(Duration.ofDays(12))), NOW, NOW))
                .isEmpty();
    }

    @Test
    void anEventOccurredPastTheHorizonIsStaleAndOneJustInsideIsNot() {
        assertThat(horizon.stale(event(NOW.minus(HORIZON).minusSeconds(1)), NOW, NOW))
                .isPresent();
        assertThat(horizon.stale(event(NOW.minus(HORIZON).plusSeconds(1)), NOW, NOW))
                .isEmpty();
    }

    @Test
    void withoutOccurredAtTheFirstSendDecides() {
        assertThat(horizon.stale(event(null), NOW.minus(HORIZON).minusSeconds(1), NOW))
                .isPresent();
        assertThat(horizon.stale(event(null), NOW.minus(HORIZON).plusSeconds(1), NOW))
                .isEmpty();
        assertThat(horizon.stale(event(null), null, NOW))
                .as("no time known: judged by the dedup table")
                .isEmpty();
    }

    @Test
    void theOlderOfTheTwoTimesDecides() {
        assertThat(horizon.stale(event(NOW.minusSeconds(60)), NOW.minus(Duration.ofDays(20)), NOW))
                .isPresent();
        assertThat(horizon.stale(event(NOW.minus(Duration.ofDays(20))), NOW.minusSeconds(60), NOW))
                .isPresent();
    }

    @Test
    void aTimeInTheFutureCountsAsAgeZero() {
        assertThat(horizon.stale(event(NOW.plus(Duration.ofDays(400))), NOW.plus(Duration.ofDays(400)), NOW))
                .isEmpty();
    }

    @Test
    void theQuarantineCarriesTheReasonAndBothAges() {
        PaymentEvent event = event(NOW.minus(Duration.ofDays(20)));

        DeliveryResult.MovedAside stale =
                horizon.stale(event, NOW.minus(Duration.ofDays(15)), NOW).orElseThrow();

        assertThat(stale.outcome()).isEqualTo(Outcome.QUARANTINED);
        assertThat(stale.rejection().reason()).isEqualTo(Reason.STALE);
        assertThat(stale.evidence())
                .containsEntry(MessageProperties.EVENT_ID, event.eventId().toString())
                .containsEntry(
                        MessageProperties.OCCURRED_AGE_SECONDS,
                        String.valueOf(Duration.ofDays(20).toSeconds()))
                .containsEntry(
                        MessageProperties.MESSAGE_AGE_SECONDS,
                        String.valueOf(Duration.ofDays(15).toSeconds()))
                .containsEntry(MessageProperties.HORIZON_SECONDS, String.valueOf(HORIZON.toSeconds()));
    }

    private static PaymentEvent event(Instant occurredAt) {
        return new PaymentEvent(UUID.randomUUID(), "acct", 100, occurredAt);
    }
}
