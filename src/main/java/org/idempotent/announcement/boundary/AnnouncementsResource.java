package org.idempotent.announcement.boundary;

import jakarta.annotation.security.RolesAllowed;
import jakarta.inject.Inject;
import jakarta.ws.rs.GET;
import jakarta.ws.rs.POST;
import jakarta.ws.rs.Path;
import jakarta.ws.rs.PathParam;
import jakarta.ws.rs.Produces;
import jakarta.ws.rs.QueryParam;
import jakarta.ws.rs.core.Context;
import jakarta.ws.rs.core.MediaType;
import jakarta.ws.rs.core.Response;
import jakarta.ws.rs.core.Response.Status;
import jakarta.ws.rs.core.SecurityContext;
import java.sql.SQLException;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.logging.Level;
import java.util.logging.Logger;
import org.idempotent.AdminApi;
import org.idempotent.announcement.control.Outbox;
import org.idempotent.announcement.control.OutboxDays;
import org.idempotent.announcement.control.Relay;
import org.idempotent.announcement.entity.Announcement;
import org.idempotent.delivery.boundary.EventIdParameter;
import org.idempotent.retention.entity.RetentionPolicy;

/**
 * For an administrator: the announcement state of an event ({@code GET /api/admin/announcements/events/{eventId}}),
 * and re-announcement of an account's payments from a sequence number on, for a downstream service that lost what it
 * had received ({@code POST /api/admin/announcements/accounts/{accountId}/reannounce?fromSequence=n}), and a purge of
 * sent announcements now ({@code POST /api/admin/announcements/purge}).
 */
@Path("admin/announcements")
@RolesAllowed(AdminApi.ROLE)
@Produces(MediaType.APPLICATION_JSON)
public class AnnouncementsResource {

    private static final Logger LOG = Logger.getLogger(AnnouncementsResource.class.getName());

    @Inject
    Outbox outbox;

    @Inject
    Relay relay;

    @Inject
    OutboxDays days;

    /** 200 with the event's announcements; 404 if it has none (not applied, or purged after its window). */
    @GET
    @Path("events/{eventId}")
    public Response ofEvent(@PathParam("eventId") String eventId) throws SQLException {
        List<Announcement> found = outbox.ofEvent(EventIdParameter.parse(eventId));
        if (found.isEmpty()) {
            return Response.status(Status.NOT_FOUND)
                    .entity(Map.of(
                            "error",
                            "no announcement of event " + eventId
                                    + " in the outbox: it was not applied, or it was sent and purged after "
                                    + RetentionPolicy.ANNOUNCEMENT_WINDOW_DAYS))
                    .build();
        }
        return Response.ok(found).build();
    }

    /**
     * Publishes the account's announcements again, in order, from {@code fromSequence} on, as new messages (the
     * broker does not drop them as resends); 409 if some of them were already purged.
     */
    @POST
    @Path("accounts/{accountId}/reannounce")
    public Response reannounce(
            @PathParam("accountId") String accountId,
            @QueryParam("fromSequence") Long fromSequence,
            @Context SecurityContext caller)
            throws SQLException {
        if (fromSequence == null || fromSequence < 1) {
            throw AdminApi.badRequest("a first sequence number (?fromSequence=n, n >= 1) is required");
        }
        Optional<Long> retained = outbox.oldestRetained(accountId);
        if (retained.isEmpty()) {
            return Response.status(Status.NOT_FOUND)
                    .entity(Map.of("error", "account " + accountId + " has no announcement in the outbox"))
                    .build();
        }
        long oldest = retained.get();
        if (fromSequence < oldest) {
            return Response.status(Status.CONFLICT)
                    .entity(Map.of(
                            "error",
                            "announcements of account " + accountId
                                    + " before sequence " + oldest + " were purged ("
                                    + RetentionPolicy.ANNOUNCEMENT_WINDOW_DAYS
                                    + "); re-announce from " + oldest + " or later",
                            "oldestRetained",
                            oldest))
                    .build();
        }
        int rows = outbox.reannounce(accountId, fromSequence);
        relay.wake();
        LOG.log(Level.INFO, "{0} re-announced {1} payments of account {2} from sequence {3}", new Object[] {
            caller.getUserPrincipal().getName(), rows, accountId, fromSequence
        });
        return Response.ok(Map.of("accountId", accountId, "fromSequence", fromSequence, "reannounced", rows))
                .build();
    }

    /**
     * Purges sent announcements older than the retention window now, as the relay's timer does every ten minutes, and
     * answers how many rows went (0 also while another instance's purge holds the lock). Unsent rows are never purged.
     */
    @POST
    @Path("purge")
    public Map<String, Long> purgeNow(@Context SecurityContext caller) {
        long deleted = days.purgeSent();
        LOG.log(Level.INFO, "{0} purged {1} sent announcements", new Object[] {
            caller.getUserPrincipal().getName(), deleted
        });
        return Map.of("deleted", deleted);
    }
}
