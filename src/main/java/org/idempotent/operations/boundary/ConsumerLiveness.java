package org.idempotent.operations.boundary;

import jakarta.enterprise.context.ApplicationScoped;
import jakarta.inject.Inject;
import java.time.Duration;
import java.util.Optional;
import org.eclipse.microprofile.config.inject.ConfigProperty;
import org.eclipse.microprofile.health.HealthCheck;
import org.eclipse.microprofile.health.HealthCheckResponse;
import org.eclipse.microprofile.health.Liveness;
import org.idempotent.delivery.control.DatabaseBreaker;
import org.idempotent.delivery.control.DeliveryMetrics;

/**
 * Alive unless a delivery has been in progress longer than CONSUMER_STUCK_SECONDS: a consumer thread wedged on a
 * lost connection or lock is what a restart cures, and restarting is safe, since the message is redelivered and
 * the dedup absorbs whatever had committed. A database outage is not that: deliveries waiting at the open breaker are
 * not in progress, and the response says how long it has been open. /health/live.
 */
@Liveness
@ApplicationScoped
public class ConsumerLiveness implements HealthCheck {

    public static final String STUCK_AFTER = "CONSUMER_STUCK_SECONDS";

    @Inject
    DeliveryMetrics metrics;

    @Inject
    DatabaseBreaker breaker;

    @Inject
    @ConfigProperty(name = STUCK_AFTER)
    int stuckAfterSeconds;

    @Override
    public HealthCheckResponse call() {
        Optional<Duration> longest = metrics.longestInFlight();
        boolean stuck = longest.filter(running -> running.toSeconds() >= stuckAfterSeconds)
                .isPresent();
        return HealthCheckResponse.named("payment-consumer-live")
                .withData(
                        "longestDeliveryInProgressSeconds",
                        longest.map(Duration::toSeconds).orElse(0L))
                .withData(STUCK_AFTER, stuckAfterSeconds)
                .withData(
                        "databaseBreakerOpenSeconds",
                        breaker.openFor().map(Duration::toSeconds).orElse(0L))
                .status(!stuck)
                .build();
    }
}
