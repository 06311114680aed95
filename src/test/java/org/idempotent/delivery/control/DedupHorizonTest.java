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
        horizon.idTimeCounts = false;
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

    @Test
    void inTheTableByIdAV7IdMadePastTheHorizonIsStaleWhateverItsMessageSays() {
        horizon.idTimeCounts = true;
        PaymentEvent madeLongAgo = new PaymentEvent(uuid7(NOW.minus(HORIZON).minusSeconds(1)), "acct", 100, NOW);

        DeliveryResult.MovedAside stale = horizon.stale(madeLongAgo, NOW, NOW).orElseThrow();

        assertThat(stale.evidence())
                .containsEntry(
                        MessageProperties.ID_AGE_SECONDS,
                        String.valueOf(HORIZON.plusSeconds(1).toSeconds()));
        assertThat(horizon.stale(
                        new PaymentEvent(uuid7(NOW.minus(HORIZON).plusSeconds(1)), "acct", 100, NOW), NOW, NOW))
                .isEmpty();
        assertThat(horizon.stale(new PaymentEvent(UUID.randomUUID(), "acct", 100, NOW), NOW, NOW))
                .as("a v4 ID has no time of its own")
                .isEmpty();
    }

    @Test
    void inTheOtherLayoutsAV7IdsOwnTimeDoesNotCount() {
        PaymentEvent madeLongAgo = new PaymentEvent(uuid7(NOW.minus(Duration.ofDays(400))), "acct", 100, NOW);

        assertThat(horizon.stale(madeLongAgo, NOW, NOW)).isEmpty();
    }

    /**
     * The table by ID drops a day of v7 records once the window has passed the day's end
     * (processed_events_expired_days: day + 1 <= now - window). From a day before that moment on, a copy of the
     * day's last event is past the horizon (the window less a day), so none arrives after the drop without being
     * quarantined, for any window the purge runs with.
     */
    @Test
    void everyCopyOfADroppedDaysEventsIsPastTheHorizonFromADayBeforeTheDrop() {
        horizon.idTimeCounts = true;
        Instant dayEnd = Instant.parse("2026-11-10T00:00:00Z");
        PaymentEvent lastOfTheDay = new PaymentEvent(uuid7(dayEnd.minusMillis(1)), "acct", 100, null);
        for (int days = 2; days <= 60; days++) {
            window(days);
            Instant drop = dayEnd.plus(Duration.ofDays(days));

            assertThat(horizon.stale(lastOfTheDay, null, drop.minus(RetentionPolicy.MARGIN)))
                    .as("a day before the drop, window %d days", days)
                    .isPresent();
            assertThat(horizon.stale(
                            lastOfTheDay,
                            null,
                            drop.minus(RetentionPolicy.MARGIN).minusSeconds(1)))
                    .as("just before that, window %d days", days)
                    .isEmpty();
        }
    }

    private void window(int days) {
        window(() -> days);
    }

    private static PaymentEvent event(Instant occurredAt) {
        return new PaymentEvent(UUID.randomUUID(), "acct", 100, occurredAt);
    }

    /** An RFC 9562 version 7 ID made at {@code time}: its Unix milliseconds first, the rest random. */
    private static UUID uuid7(Instant time) {
        UUID random = UUID.randomUUID();
        long most = (time.toEpochMilli() << 16) | 0x7000L | (random.getMostSignificantBits() & 0x0FFFL);
        return new UUID(most, random.getLeastSignificantBits());
    }
}
