package org.idempotent.refund.control;

import static org.idempotent.delivery.entity.Rejection.Reason.INVALID_EVENT_ID;
import static org.idempotent.refund.entity.RefundRejection.INVALID_AMOUNT;
import static org.idempotent.refund.entity.RefundRejection.INVALID_PAYMENT_EVENT_ID;

import jakarta.jms.JMSException;
import jakarta.jms.Message;
import java.util.UUID;
import org.idempotent.delivery.control.JsonMessages;
import org.idempotent.delivery.entity.RejectedMessage;
import org.idempotent.refund.entity.RefundEvent;

/**
 * Reads the refund contract: a JSON object {@code {"eventId","paymentEventId","amountCents"}} and an optional
 * {@code "occurredAt"}, within what every event's contract shares ({@link JsonMessages}). Anything else is a {@link
 * RejectedMessage} naming the reason.
 */
public final class RefundMessageParser {

    private RefundMessageParser() {}

    /**
     * @throws RejectedMessage if the message can never be a refund event
     * @throws JMSException if the body cannot be read from the provider (transient: the caller lets it redeliver)
     */
    public static RefundEvent read(Message message) throws JMSException {
        return parse(JsonMessages.body(message));
    }

    public static RefundEvent parse(String json) {
        return JsonMessages.parse(json, object -> {
            UUID eventId = JsonMessages.uuid(object, "eventId", INVALID_EVENT_ID);
            UUID paymentEventId = JsonMessages.uuid(object, "paymentEventId", INVALID_PAYMENT_EVENT_ID);
            if (paymentEventId.equals(eventId)) {
                throw new RejectedMessage(
                        INVALID_PAYMENT_EVENT_ID, "paymentEventId is the refund's own eventId " + eventId);
            }
            long amountCents = JsonMessages.integer(
                    object, "amountCents", RefundEvent.MIN_AMOUNT_CENTS, RefundEvent.MAX_AMOUNT_CENTS, INVALID_AMOUNT);
            return new RefundEvent(eventId, paymentEventId, amountCents, JsonMessages.occurredAt(object));
        });
    }
}
