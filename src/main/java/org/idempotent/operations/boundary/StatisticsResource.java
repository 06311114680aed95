package org.idempotent.operations.boundary;

import jakarta.annotation.security.RolesAllowed;
import jakarta.inject.Inject;
import jakarta.ws.rs.GET;
import jakarta.ws.rs.Path;
import jakarta.ws.rs.Produces;
import jakarta.ws.rs.core.MediaType;
import org.idempotent.AdminApi;
import org.idempotent.delivery.control.DeliveryMetrics;
import org.idempotent.retention.control.DedupTableGauges;

/** For an administrator: what this instance consumed since it started, and the state of the dedup table. */
@Path("admin/stats")
@RolesAllowed(AdminApi.ROLE)
@Produces(MediaType.APPLICATION_JSON)
public class StatisticsResource {

    public record Statistics(DeliveryMetrics.Totals consumed, DedupTableGauges.Measurement processedEvents) {}

    @Inject
    DeliveryMetrics metrics;

    @Inject
    DedupTableGauges table;

    @GET
    public Statistics current() {
        return new Statistics(metrics.totals(), table.current());
    }
}
