package org.idempotent.payment.control;

import jakarta.annotation.PostConstruct;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.event.Observes;
import jakarta.enterprise.event.Startup;
import jakarta.inject.Inject;
import java.util.EnumMap;
import java.util.Map;
import org.eclipse.microprofile.metrics.Counter;
import org.eclipse.microprofile.metrics.MetricRegistry;
import org.eclipse.microprofile.metrics.Tag;
import org.idempotent.payment.entity.Outcome;

/** One counter per outcome, exposed at /metrics as {@code payments_messages_total{outcome="..."}}. */
@ApplicationScoped
public class OutcomeCounters {

    public static final String METRIC = "payments.messages";

    @Inject
    MetricRegistry registry;

    private final Map<Outcome, Counter> counters = new EnumMap<>(Outcome.class);

    @PostConstruct
    void register() {
        for (Outcome outcome : Outcome.values()) {
            counters.put(outcome, registry.counter(METRIC, new Tag("outcome", outcome.name().toLowerCase())));
        }
    }

    /** Registers the counters at deployment, so that /metrics shows them at zero before the first message. */
    void registerAtStartup(@Observes Startup startup) {
        counters.size();
    }

    public void count(Outcome outcome) {
        counters.get(outcome).inc();
    }
}
