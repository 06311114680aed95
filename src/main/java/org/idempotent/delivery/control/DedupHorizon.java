package org.idempotent.delivery.control;

import jakarta.enterprise.context.ApplicationScoped;
import jakarta.inject.Inject;
import java.time.Duration;
import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;
import java.util.logging.Level;
import java.util.logging.Logger;
import org.idempotent.delivery.entity.DeliveredEvent;
import org.idempotent.delivery.entity.Outcome;
import org.idempotent.delivery.entity.Rejection;
import org.idempotent.retention.control.RetentionSettings;
import org.idempotent.retention.entity.RetentionPolicy;
import org.idempotent.schema.boundary.SchemaMigration;
import org.idempotent.schema.entity.DedupLayout;

/**
 * Judges a delivery by the dedup horizon ({@link RetentionPolicy#horizon}, which says what it is and why): a copy older
 * than that may be a duplicate whose record the purge deleted.
 *
 * <p>Which time counts: the event's {@code occurredAt} (contract version 2), the producer's time of the event, the
 * same on every resend; and the time the message was first sent, which the broker's JMSTimestamp gives until a
 * forward re-sends it (dead-letter forwards carry the first one along as {@code originalTimestamp}). The older of the
 * two decides. A version 1 event has only the second, so a producer re-sending it from an archive stamps it new: such
 * producers must send {@code occurredAt}. Clock skew: a time in the future counts as age zero; a producer clock
 * that runs ahead makes a message look younger than it is, which the margin absorbs up to a day.
 *
 * <p>In the table by event ID ({@link DedupLayout#ID}) a third time counts: a v7 ID's own (its first 48 bits, Unix
 * milliseconds), since the purge drops a day of v7 records by that time, once the window has passed the day's end. A
 * copy arriving after the drop is older than the window by its ID, so past the horizon, whatever its occurredAt and
 * its message say: quarantined, never applied because its record is gone. The producer's clock cannot break this: the
 * ID that places the record is the ID whose age is judged.
 */
@ApplicationScoped
public class DedupHorizon {

    private static final Logger LOG = Logger.getLogger(DedupHorizon.class.getName());

    @Inject
    RetentionSettings retention;

    /** Until the setting is first read: the shortest horizon, which quarantines more rather than apply blindly. */
    private volatile Duration horizon = RetentionPolicy.MARGIN;

    @Inject
    SchemaMigration schema;

    private volatile boolean unreadable;

    /** Whether a v7 ID's own time counts: read once, the layout changes only by a conversion and a restart. */
    volatile Boolean idTimeCounts;

    /**
     * The horizon of the retention window as configured now. A setting that cannot be read keeps the last horizon,
     * logged once: a typo in the configuration must not fail every delivery.
     */
    public Duration horizon() {
        try {
            horizon = RetentionPolicy.horizon(retention.window());
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

    /** The STALE rejection and its evidence, if any time of the event that counts is past the horizon. */
    public Optional<DeliveryResult.MovedAside> stale(DeliveredEvent event, Instant firstSent, Instant now) {
        Duration horizon = horizon();
        Duration occurredAge = age(event.occurredAt(), now);
        Duration messageAge = age(firstSent, now);
        Duration idAge = idTimeCounts() ? age(idTime(event.eventId()), now) : null;
        boolean stale = (occurredAge != null && occurredAge.compareTo(horizon) > 0)
                || (messageAge != null && messageAge.compareTo(horizon) > 0)
                || (idAge != null && idAge.compareTo(horizon) > 0);
        if (!stale) {
            return Optional.empty();
        }
        Map<String, String> evidence = new LinkedHashMap<>();
        evidence.put(MessageProperties.EVENT_ID, event.eventId().toString());
        if (occurredAge != null) {
            evidence.put(MessageProperties.OCCURRED_AGE_SECONDS, String.valueOf(occurredAge.toSeconds()));
        }
        if (messageAge != null) {
            evidence.put(MessageProperties.MESSAGE_AGE_SECONDS, String.valueOf(messageAge.toSeconds()));
        }
        if (idAge != null) {
            evidence.put(MessageProperties.ID_AGE_SECONDS, String.valueOf(idAge.toSeconds()));
        }
        evidence.put(MessageProperties.HORIZON_SECONDS, String.valueOf(horizon.toSeconds()));
        Rejection rejection = new Rejection(
                Rejection.Reason.STALE,
                "event " + event.eventId() + " is older than the "
                        + "dedup horizon of " + horizon.toHours() + " h (occurred " + hours(occurredAge)
                        + " ago, first sent "
                        + hours(messageAge)
                        + " ago" + (idAge == null ? "" : ", its ID made " + hours(idAge) + " ago")
                        + ") and has no dedup record: it may be a duplicate whose record was purged");
        return Optional.of(new DeliveryResult.MovedAside(Outcome.QUARANTINED, rejection, evidence));
    }

    private boolean idTimeCounts() {
        Boolean counts = idTimeCounts;
        if (counts == null) {
            counts = schema.dedupLayout() == DedupLayout.ID;
            idTimeCounts = counts;
        }
        return counts;
    }

    /** A v7 ID's own time (RFC 9562: its first 48 bits are Unix milliseconds); null for another version. */
    static Instant idTime(UUID id) {
        return id.version() == 7 ? Instant.ofEpochMilli(id.getMostSignificantBits() >>> 16) : null;
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
