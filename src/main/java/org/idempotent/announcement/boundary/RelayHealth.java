package org.idempotent.announcement.boundary;

import jakarta.enterprise.context.ApplicationScoped;
import jakarta.inject.Inject;
import java.sql.SQLException;
import java.util.logging.Level;
import java.util.logging.Logger;
import org.eclipse.microprofile.health.HealthCheck;
import org.eclipse.microprofile.health.HealthCheckResponse;
import org.eclipse.microprofile.health.HealthCheckResponseBuilder;
import org.eclipse.microprofile.health.Readiness;
import org.idempotent.announcement.control.Outbox;
import org.idempotent.announcement.control.Relay;

/**
 * The relay's delay in /health/ready, always UP: a delayed announcement is no reason to stop consuming payments.
 * When the oldest unsent announcement is older than {@link #HELD_AFTER_SECONDS}, it names the session whose
 * transaction holds the horizon (a long or idle-in-transaction session anywhere in the cluster holds back every
 * announcement committed after it began; see OutboxCursor), which is what an operator then looks for.
 */
@Readiness
@ApplicationScoped
public class RelayHealth implements HealthCheck {

    static final double HELD_AFTER_SECONDS = 10;

    private static final Logger LOG = Logger.getLogger(RelayHealth.class.getName());

    @Inject
    Relay relay;

    @Inject
    Outbox outbox;

    @Override
    public HealthCheckResponse call() {
        Outbox.Backlog backlog = relay.backlog();
        HealthCheckResponseBuilder response = HealthCheckResponse.named("announcement-relay")
                .withData("unsent", backlog.unsent())
                .withData("oldestUnsentAgeSeconds", Math.round(backlog.oldestAgeSeconds()))
                .up();
        if (backlog.oldestAgeSeconds() > HELD_AFTER_SECONDS) {
            try {
                outbox.horizonHolder().ifPresent(holder -> response.withData("heldBackBy", holder));
            } catch (SQLException e) {
                LOG.log(Level.FINE, "Relay health: the horizon's holder unknown: {0}", e.toString());
            }
        }
        return response.build();
    }
}
