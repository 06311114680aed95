package org.idempotent.delivery.control;

import jakarta.annotation.PostConstruct;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.event.Observes;
import jakarta.enterprise.event.Startup;
import jakarta.inject.Inject;
import java.time.Duration;
import java.util.EnumMap;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import org.eclipse.microprofile.metrics.Counter;
import org.eclipse.microprofile.metrics.Histogram;
import org.eclipse.microprofile.metrics.MetricRegistry;
import org.eclipse.microprofile.metrics.Snapshot;
import org.eclipse.microprofile.metrics.Tag;
import org.idempotent.delivery.entity.Outcome;

/**
 * What the consumer did, exposed at /metrics: one counter per outcome ({@code payments_messages_total{outcome}}), the
 * processing time of a message ({@code payments_processing_microseconds}), and how late duplicates arrive
 * ({@code payments_duplicate_age_seconds}).
 *
 * <p>The processing time is a histogram of microseconds, named so, rather than a MicroProfile Timer: Payara 6.2025.10's
 * Prometheus output prints a timer's nanoseconds under a {@code _seconds} name (FISH-13137, fixed in later releases),
 * and a histogram with a unit in its metadata is scaled in some figures and not in others. A histogram without a unit
 * is printed as recorded, so the name says what the numbers are, on every Payara release. Also knows which
 * deliveries are being processed right now, for liveness.
 */
@ApplicationScoped
public class DeliveryMetrics {

    public static final String MESSAGES = "payments.messages";
    /** How long after the original a duplicate arrived: the figure to choose a retention window by. */
    public static final String DUPLICATE_AGE = "payments.duplicate.age.seconds";

    public static final String PROCESSING = "payments.processing.microseconds";
    /**
     * Deliveries the broker marked as redelivered (a rollback, a consumer that died or lost its connection before
     * acknowledging): the work a crash or an outage caused, apart from producers' resends.
     */
    public static final String REDELIVERIES = "payments.redeliveries";
    /** Failed database work by class (DatabaseFailure): unclassified ones are what the rules do not know yet. */
    public static final String DATABASE_FAILURES = "payments.database.failures";

    /** The totals of this instance since it started. */
    public record Totals(
            Map<String, Long> messages,
            long timed,
            double processingMeanMillis,
            double processingMaxMillis,
            long duplicatesAged,
            double duplicateAgeMaxSeconds) {}

    @Inject
    MetricRegistry registry;

    private final Map<Outcome, Counter> counters = new EnumMap<>(Outcome.class);
    private final Map<DatabaseFailure.Kind, Counter> databaseFailures = new EnumMap<>(DatabaseFailure.Kind.class);
    private final Map<Thread, Long> inFlight = new ConcurrentHashMap<>();
    private Counter redeliveries;
    private Histogram duplicateAge;
    private Histogram processing;

    @PostConstruct
    void register() {
        for (Outcome outcome : Outcome.values()) {
            counters.put(
                    outcome,
                    registry.counter(MESSAGES, new Tag("outcome", outcome.name().toLowerCase())));
        }
        for (DatabaseFailure.Kind kind : DatabaseFailure.Kind.values()) {
            if (kind != DatabaseFailure.Kind.DEDUP_KEY) {
                databaseFailures.put(
                        kind,
                        registry.counter(
                                DATABASE_FAILURES, new Tag("class", kind.name().toLowerCase())));
            }
        }
        redeliveries = registry.counter(REDELIVERIES);
        duplicateAge = registry.histogram(DUPLICATE_AGE);
        processing = registry.histogram(PROCESSING);
    }

    /** Observing Startup makes CDI create the bean at deployment: /metrics shows zeros before the first message. */
    void registerAtStartup(@Observes Startup startup) {
        // the work is done by the @PostConstruct method
    }

    /** A delivery is being processed on this thread from now on; returns its start, for {@link #finished}. */
    public long started() {
        long now = System.nanoTime();
        inFlight.put(Thread.currentThread(), now);
        return now;
    }

    public void finished(long started, Outcome outcome) {
        inFlight.remove(Thread.currentThread());
        processing.update((System.nanoTime() - started) / 1_000);
        counters.get(outcome).inc();
    }

    public void redelivered() {
        redeliveries.inc();
    }

    public void databaseFailure(DatabaseFailure.Kind kind) {
        Counter counter = databaseFailures.get(kind);
        if (counter != null) {
            counter.inc();
        }
    }

    public void duplicateArrived(Duration age) {
        duplicateAge.update(Math.max(0, age.toSeconds()));
    }

    /** How long the oldest delivery still in progress has been running; empty when none is. */
    public Optional<Duration> longestInFlight() {
        long now = System.nanoTime();
        return inFlight.values().stream().min(Long::compare).map(start -> Duration.ofNanos(now - start));
    }

    public long count(Outcome outcome) {
        return counters.get(outcome).getCount();
    }

    public Totals totals() {
        Map<String, Long> messages = new LinkedHashMap<>();
        counters.forEach((outcome, counter) -> messages.put(outcome.name().toLowerCase(), counter.getCount()));
        Snapshot times = processing.getSnapshot();
        return new Totals(
                messages,
                processing.getCount(),
                times.getMean() / 1e3,
                times.getMax() / 1e3,
                duplicateAge.getCount(),
                duplicateAge.getSnapshot().getMax());
    }
}
