package org.idempotent.delivery.boundary;

import java.util.UUID;
import org.idempotent.AdminApi;
import org.idempotent.delivery.control.JsonMessages;

/** An event ID in an admin API path: the message contract's canonical form, or a 400 that says what is expected. */
public final class EventIdParameter {

    private EventIdParameter() {}

    public static UUID parse(String eventId) {
        if (!JsonMessages.isCanonicalUuid(eventId)) {
            throw AdminApi.badRequest("not an event ID (a UUID in 8-4-4-4-12 form): " + eventId);
        }
        return UUID.fromString(eventId);
    }
}
