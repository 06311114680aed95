package org.idempotent.payment.control;

import jakarta.annotation.PostConstruct;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.event.Observes;
import jakarta.enterprise.event.Startup;
import jakarta.inject.Inject;
import java.time.Duration;
import java.util.EnumMap;
import java.util.Map;
import org.eclipse.microprofile.metrics.Counter;
import org.eclipse.microprofile.metrics.Histogram;
import org.eclipse.microprofile.metrics.MetricRegistry;
import org.eclipse.microprofile.metrics.Tag;
import org.idempotent.payment.entity.Outcome;

/**
 * One counter per outcome, exposed at /metrics as {@code payments_messages_total{outcome="..."}}, and the histogram of
 * duplicate ages, {@code payments_duplicate_age_seconds}.
 */
@ApplicationScoped
public class OutcomeCounters {

    public static final String METRIC = "payments.messages";
    /** How long after the original a duplicate arrived: the figure to choose a retention window by. */
    public static final String DUPLICATE_AGE = "payments.duplicate.age.seconds";

    @Inject
    MetricRegistry registry;

    private final Map<Outcome, Counter> counters = new EnumMap<>(Outcome.class);
    private Histogram duplicateAge;

    @PostConstruct
    void register() {
        for (Outcome outcome : Outcome.values()) {
            counters.put(outcome, registry.counter(METRIC, new Tag("outcome", outcome.name().toLowerCase())));
        }
        duplicateAge = registry.histogram(DUPLICATE_AGE);
    }

    /** Registers the counters at deployment, so that /metrics shows them at zero before the first message. */
    void registerAtStartup(@Observes Startup startup) {
        counters.size();
    }

    public void count(Outcome outcome) {
        counters.get(outcome).inc();
    }

    public void duplicateArrived(Duration age) {
        duplicateAge.update(Math.max(0, age.toSeconds()));
    }
}
