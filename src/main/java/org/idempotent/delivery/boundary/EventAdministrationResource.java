package org.idempotent.delivery.boundary;

import jakarta.annotation.security.RolesAllowed;
import jakarta.ejb.EJB;
import jakarta.inject.Inject;
import jakarta.jms.JMSException;
import jakarta.ws.rs.Consumes;
import jakarta.ws.rs.GET;
import jakarta.ws.rs.POST;
import jakarta.ws.rs.Path;
import jakarta.ws.rs.PathParam;
import jakarta.ws.rs.Produces;
import jakarta.ws.rs.core.MediaType;
import jakarta.ws.rs.core.Response;
import jakarta.ws.rs.core.Response.Status;
import java.time.Instant;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.idempotent.AdminApi;
import org.idempotent.delivery.control.EventAdministration;
import org.idempotent.delivery.control.EventProcessor;
import org.idempotent.delivery.control.Quarantine;
import org.idempotent.delivery.entity.ForgottenEvent;
import org.idempotent.delivery.entity.ReleasedEvent;

/**
 * For an administrator: whether an event was processed (when, with which payload fingerprint, whether it was ever
 * forgotten or released), "forget event" before a deliberate replay, and "release" of a quarantined stale event.
 * {@code /api/admin/events/{eventId}}.
 */
@Path("admin/events/{eventId}")
@RolesAllowed(AdminApi.ROLE)
@Produces(MediaType.APPLICATION_JSON)
public class EventAdministrationResource {

    static final int MAX_REASON_LENGTH = 500;

    public record Forgetting(
            Instant forgottenAt,
            String forgottenBy,
            String reason,
            Instant processedAt,
            String fingerprint,
            boolean guardReleased) {

        static Forgetting of(ForgottenEvent audit) {
            return new Forgetting(
                    audit.forgottenAt(),
                    audit.forgottenBy(),
                    audit.reason(),
                    audit.processedAt(),
                    hex(audit.fingerprint()),
                    audit.guardReleased());
        }
    }

    public record Release(Instant releasedAt, String releasedBy, String reason, Integer messagesMoved) {

        static Release of(ReleasedEvent audit, Integer moved) {
            return new Release(audit.releasedAt(), audit.releasedBy(), audit.reason(), moved);
        }
    }

    /** The body of a decision: why (required, audited). */
    public record Decision(String reason) {}

    /** fingerprint: SHA-256 of the payload first processed under the ID, hex; null for records older than V3. */
    public record EventRecord(
            UUID eventId,
            boolean processed,
            Instant processedAt,
            String fingerprint,
            List<Forgetting> forgotten,
            List<Release> released) {}

    @EJB
    EventAdministration events;

    @Inject
    EventProcessor processor;

    @Inject
    Quarantine quarantine;

    /** 200 if the event is recorded as processed, 404 if not (the body says whether it was forgotten). */
    @GET
    public Response lookup(@PathParam("eventId") String eventId) {
        UUID id = EventIdParameter.parse(eventId);
        List<Forgetting> forgotten =
                events.forgotten(id).stream().map(Forgetting::of).toList();
        List<Release> released = events.releases(id).stream()
                .map(audit -> Release.of(audit, null))
                .toList();
        return processor
                .recordOf(id)
                .map(record -> Response.ok(new EventRecord(
                        id, true, record.processedAt(), hex(record.fingerprint()), forgotten, released)))
                .orElseGet(() -> Response.status(Status.NOT_FOUND)
                        .entity(new EventRecord(id, false, null, null, forgotten, released)))
                .build();
    }

    /**
     * Forgets the event: its next delivery is applied as if it were new. For replaying it on purpose, e.g. from the
     * dead-letter queue after its original effect was reversed by hand. Audited; the reason is required.
     */
    @POST
    @Path("forget")
    @Consumes(MediaType.APPLICATION_JSON)
    public Response forget(@PathParam("eventId") String eventId, Decision decision) {
        UUID id = EventIdParameter.parse(eventId);
        return events.forget(id, requireReason(decision))
                .map(audit -> Response.ok(Forgetting.of(audit)))
                .orElseGet(() -> Response.status(Status.NOT_FOUND)
                        .entity(Map.of("error", "event " + id + " is not recorded as processed; nothing to forget")))
                .build();
    }

    /**
     * Releases the event's quarantined (STALE) messages: records who decided it and why, then moves them back to the
     * payments queue, where they are applied unless the event's dedup record exists. 404 if none is quarantined.
     */
    @POST
    @Path("release")
    @Consumes(MediaType.APPLICATION_JSON)
    public Response release(@PathParam("eventId") String eventId, Decision decision) throws JMSException {
        UUID id = EventIdParameter.parse(eventId);
        String given = requireReason(decision);
        if (quarantine.waiting(id) == 0) {
            return Response.status(Status.NOT_FOUND)
                    .entity(Map.of(
                            "error",
                            "no message of event " + id + " is in " + quarantine.queue() + "; nothing to release"))
                    .build();
        }
        ReleasedEvent audit = events.release(id, given);
        return Response.ok(Release.of(audit, quarantine.release(id))).build();
    }

    private static String requireReason(Decision decision) {
        String reason = decision == null ? null : decision.reason();
        if (reason == null || reason.isBlank() || reason.length() > MAX_REASON_LENGTH) {
            throw AdminApi.badRequest("a reason (JSON body {\"reason\": \"...\"}, 1 to " + MAX_REASON_LENGTH
                    + " characters) is required");
        }
        return reason.strip();
    }

    private static String hex(byte[] bytes) {
        return bytes == null ? null : HexFormat.of().formatHex(bytes);
    }
}
