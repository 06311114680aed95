package org.idempotent.retention.boundary;

import jakarta.annotation.security.RolesAllowed;
import jakarta.ejb.EJB;
import jakarta.inject.Inject;
import jakarta.ws.rs.GET;
import jakarta.ws.rs.POST;
import jakarta.ws.rs.Path;
import jakarta.ws.rs.Produces;
import jakarta.ws.rs.core.MediaType;
import org.idempotent.AdminApi;
import org.idempotent.retention.control.Retention;
import org.idempotent.retention.control.RetentionSettings;
import org.idempotent.retention.entity.PurgeRun;
import org.idempotent.retention.entity.RetentionPolicy;

/** For an administrator: the retention policy and last run, and a purge on demand. */
@Path("admin/retention")
@RolesAllowed(AdminApi.ROLE)
@Produces(MediaType.APPLICATION_JSON)
public class RetentionResource {

    public record Status(RetentionPolicy policy, PurgeRun lastRun) {}

    @EJB
    Retention retention;

    @Inject
    RetentionSettings settings;

    @GET
    public Status status() {
        return new Status(settings.policy(), retention.lastRun());
    }

    /** Runs a purge now, in this request, and answers what it did (SKIPPED_LOCKED if one is already running). */
    @POST
    @Path("purge")
    public PurgeRun purgeNow() {
        return retention.purge();
    }
}
