package org.idempotent.payment.control;

import jakarta.enterprise.context.ApplicationScoped;
import jakarta.inject.Inject;
import jakarta.inject.Provider;
import java.time.Duration;
import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Optional;
import java.util.logging.Level;
import java.util.logging.Logger;
import org.eclipse.microprofile.config.inject.ConfigProperty;
import org.idempotent.payment.entity.Outcome;
import org.idempotent.payment.entity.PaymentEvent;
import org.idempotent.payment.entity.Rejection;
import org.idempotent.retention.entity.RetentionPolicy;

/**
 * How old a message may be and still be judged by the dedup table alone: retention deletes a record once it is
 * {@code RETENTION_DAYS} old, so a copy older than that may be a duplicate whose record is gone. The horizon is the
 * window less {@link #MARGIN}.
 *
 * <p>Which time counts: the event's {@code occurredAt} (contract version 2), the producer's time of the payment, the
 * same on every resend; and the time the message was first sent, which the broker's JMSTimestamp gives until a
 * forward re-sends it (dead-letter forwards carry the first one along as {@code originalTimestamp}). The older of the
 * two decides. A version 1 event has only the second, so a producer re-sending it from an archive stamps it new: such
 * producers must send {@code occurredAt}. Clock skew: a time in the future counts as age zero; a producer clock
 * that runs ahead makes a message look younger than it is, which the margin absorbs up to a day.
 */
@ApplicationScoped
public class DedupHorizon {

    /** Clock skew between producer, consumer and database clocks, and a purge running while a message is in flight. */
    public static final Duration MARGIN = Duration.ofDays(1);

    public static final String EVENT_ID = "eventId";
    public static final String OCCURRED_AGE_SECONDS = "occurredAgeSeconds";
    public static final String MESSAGE_AGE_SECONDS = "messageAgeSeconds";
    public static final String HORIZON_SECONDS = "horizonSeconds";

    private static final Logger LOG = Logger.getLogger(DedupHorizon.class.getName());

    @Inject
    @ConfigProperty(name = RetentionPolicy.WINDOW_DAYS)
    Provider<Integer> retentionDays;

    /** Until the setting is first read: the shortest horizon, which quarantines more rather than apply blindly. */
    private volatile Duration horizon = MARGIN;

    private volatile boolean unreadable;

    /**
     * The window less the margin, but never under the margin itself: a window of a day or less (which retention refuses
     * to purge with, see RetentionPolicy) must not make every delivery stale. A setting that cannot be read keeps the
     * last horizon, logged once: a typo in the configuration must not fail every delivery.
     */
    public Duration horizon() {
        try {
            Duration lessMargin = Duration.ofDays(retentionDays.get()).minus(MARGIN);
            horizon = lessMargin.compareTo(MARGIN) < 0 ? MARGIN : lessMargin;
            unreadable = false;
        } catch (RuntimeException e) {
            if (!unreadable) {
                unreadable = true;
                LOG.log(Level.SEVERE, "{0} cannot be read ({1}): the dedup horizon stays {2} h", new Object[] {
                    RetentionPolicy.WINDOW_DAYS, e.getMessage(), horizon.toHours()
                });
            }
        }
        return horizon;
    }

    /** The STALE rejection and its evidence, if either time of the event is past the horizon. */
    public Optional<Consumed.MovedAside> stale(PaymentEvent event, Instant firstSent, Instant now) {
        Duration horizon = horizon();
        Duration occurredAge = age(event.occurredAt(), now);
        Duration messageAge = age(firstSent, now);
        boolean stale = (occurredAge != null && occurredAge.compareTo(horizon) > 0)
                || (messageAge != null && messageAge.compareTo(horizon) > 0);
        if (!stale) {
            return Optional.empty();
        }
        Map<String, String> evidence = new LinkedHashMap<>();
        evidence.put(EVENT_ID, event.eventId().toString());
        if (occurredAge != null) {
            evidence.put(OCCURRED_AGE_SECONDS, String.valueOf(occurredAge.toSeconds()));
        }
        if (messageAge != null) {
            evidence.put(MESSAGE_AGE_SECONDS, String.valueOf(messageAge.toSeconds()));
        }
        evidence.put(HORIZON_SECONDS, String.valueOf(horizon.toSeconds()));
        Rejection rejection = new Rejection(
                Rejection.Reason.STALE,
                "event " + event.eventId() + " is older than the "
                        + "dedup horizon of " + horizon.toHours() + " h (occurred " + hours(occurredAge)
                        + " ago, first sent "
                        + hours(messageAge)
                        + " ago) and has no dedup record: it may be a duplicate whose record was purged");
        return Optional.of(new Consumed.MovedAside(Outcome.QUARANTINED, rejection, evidence));
    }

    private static Duration age(Instant time, Instant now) {
        if (time == null) {
            return null;
        }
        Duration age = Duration.between(time, now);
        return age.isNegative() ? Duration.ZERO : age;
    }

    private static String hours(Duration age) {
        return age == null ? "unknown" : age.toHours() + " h";
    }
}
