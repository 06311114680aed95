package org.idempotent.retention.entity;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import org.junit.jupiter.api.Test;

class RetentionPolicyTest {

    private static RetentionPolicy policy(Duration window, int batch, String schedule) {
        return new RetentionPolicy(
                window,
                batch,
                Duration.ofMinutes(5),
                20_000,
                16L << 20,
                schedule,
                20,
                Duration.ofMinutes(5),
                Duration.ofDays(7));
    }

    @Test
    void defaultsAreSafe() {
        RetentionPolicy defaults = policy(Duration.ofDays(14), 5000, "minute=*/15;hour=*");

        assertThat(defaults.requireSafe()).isSameAs(defaults);
        assertThat(defaults.safeWindow()).isEqualTo(Duration.ofMinutes(100).plusDays(8));
    }

    @Test
    void windowUnderADayIsRefused() {
        assertThatThrownBy(() -> policy(Duration.ofHours(12), 5000, "hour=*").requireSafe())
                .isInstanceOf(UnsafeRetention.class)
                .hasMessageContaining("RETENTION_DAYS=0.50 is under the minimum of 1 day");
    }

    @Test
    void windowShorterThanRedeliveriesPlusReplayIsRefusedNamingEveryKey() {
        assertThatThrownBy(() -> policy(Duration.ofDays(8), 5000, "hour=*").requireSafe())
                .isInstanceOf(UnsafeRetention.class)
                .hasMessageContaining("RETENTION_DAYS=8.00")
                .hasMessageContaining("BROKER_MAX_DELIVERY_ATTEMPTS (20)")
                .hasMessageContaining("BROKER_MAX_REDELIVERY_DELAY_SECONDS (300)")
                .hasMessageContaining("DLQ_REPLAY_DAYS (7.00)")
                .hasMessageContaining("8.07 days");
    }

    @Test
    void longRedeliveryDelaysRaiseTheSafeWindow() {
        RetentionPolicy slowRedelivery = new RetentionPolicy(
                Duration.ofDays(14),
                5000,
                Duration.ofMinutes(5),
                20_000,
                16L << 20,
                "hour=*",
                100,
                Duration.ofHours(2),
                Duration.ofDays(7));

        assertThatThrownBy(slowRedelivery::requireSafe).hasMessageContaining("16.33 days");
    }

    @Test
    void invalidBatchBudgetAndScheduleAreRefusedTogether() {
        RetentionPolicy invalid = new RetentionPolicy(
                Duration.ofDays(14),
                0,
                Duration.ZERO,
                0,
                4096,
                "every hour",
                20,
                Duration.ofMinutes(5),
                Duration.ofDays(7));

        assertThatThrownBy(invalid::requireSafe)
                .hasMessageContaining("RETENTION_BATCH_SIZE=0")
                .hasMessageContaining("RETENTION_ROWS_PER_SECOND=0 must be positive")
                .hasMessageContaining("RETENTION_WAL_BYTES_PER_SECOND=4096 is under 65536")
                .hasMessageContaining("RETENTION_TIME_BUDGET_SECONDS=0")
                .hasMessageContaining("RETENTION_SCHEDULE=every hour");
    }

    @Test
    void aSliceRestsForWhicheverRateBindsLessTheTimeItTook() {
        RetentionPolicy policy = policy(Duration.ofDays(14), 1000, "hour=*");

        assertThat(policy.restAfter(1000, 170_000, Duration.ofMillis(10)))
                .as("1,000 rows at 20,000/s: 50 ms, of which the slice took 10")
                .isEqualTo(Duration.ofMillis(40));
        assertThat(policy.restAfter(1000, 16L << 20, Duration.ofMillis(10)))
                .as("a second's worth of WAL (full-page images) binds before the rows")
                .isEqualTo(Duration.ofMillis(990));
        assertThat(policy.restAfter(1000, 170_000, Duration.ofMillis(80)))
                .as("a slice slower than its rate: no rest, and no debt either")
                .isZero();
    }

    @Test
    void scheduleIsReadAsTimerFields() {
        var expression = policy(Duration.ofDays(14), 1, "minute=*/15; hour=1-5 ;dayOfWeek=Mon")
                .scheduleExpression();

        assertThat(expression.getMinute()).isEqualTo("*/15");
        assertThat(expression.getHour()).isEqualTo("1-5");
        assertThat(expression.getDayOfWeek()).isEqualTo("Mon");
    }

    @Test
    void unknownScheduleFieldIsRefused() {
        assertThatThrownBy(() -> policy(Duration.ofDays(14), 1, "minutes=5").requireSafe())
                .hasMessageContaining("unknown field 'minutes'");
    }
}
