package org.idempotent.payment.control;

import static org.idempotent.delivery.entity.Rejection.Reason.INVALID_EVENT_ID;
import static org.idempotent.payment.entity.PaymentRejection.INVALID_ACCOUNT_ID;
import static org.idempotent.payment.entity.PaymentRejection.INVALID_AMOUNT;

import jakarta.jms.JMSException;
import jakarta.jms.Message;
import jakarta.json.JsonString;
import jakarta.json.JsonValue;
import org.idempotent.delivery.control.JsonMessages;
import org.idempotent.delivery.entity.RejectedMessage;
import org.idempotent.payment.entity.PaymentEvent;

/**
 * Reads the payment contract: a JSON object {@code {"eventId","accountId","amountCents"}} and, from contract version
 * 2, an optional {@code "occurredAt"}, within what every event's contract shares ({@link JsonMessages}). Anything else
 * is a {@link RejectedMessage} naming the reason.
 */
public final class PaymentMessageParser {

    private PaymentMessageParser() {}

    /**
     * @throws RejectedMessage if the message can never be a payment event
     * @throws JMSException if the body cannot be read from the provider (transient: the caller lets it redeliver)
     */
    public static PaymentEvent read(Message message) throws JMSException {
        return parse(JsonMessages.body(message));
    }

    public static PaymentEvent parse(String json) {
        return JsonMessages.parse(
                json,
                object -> new PaymentEvent(
                        JsonMessages.uuid(object, "eventId", INVALID_EVENT_ID),
                        accountId(JsonMessages.required(object, "accountId")),
                        JsonMessages.integer(
                                object,
                                "amountCents",
                                PaymentEvent.MIN_AMOUNT_CENTS,
                                PaymentEvent.MAX_AMOUNT_CENTS,
                                INVALID_AMOUNT),
                        JsonMessages.occurredAt(object)));
    }

    private static String accountId(JsonValue value) {
        if (value instanceof JsonString string
                && PaymentEvent.ACCOUNT_ID.matcher(string.getString()).matches()) {
            return string.getString();
        }
        throw new RejectedMessage(
                INVALID_ACCOUNT_ID,
                "accountId must be 1-64 of A-Z a-z 0-9 _ . : -, got " + JsonMessages.abbreviate(value));
    }
}
