package org.idempotent.loadgen;

import jakarta.jms.BytesMessage;
import jakarta.jms.JMSException;
import jakarta.jms.MapMessage;
import jakarta.jms.Message;
import jakarta.jms.Session;
import java.nio.charset.StandardCharsets;
import java.util.UUID;
import org.idempotent.delivery.entity.Rejection;
import org.idempotent.delivery.entity.Rejection.Reason;
import org.idempotent.payment.entity.PaymentRejection;

/** One malformed message of each kind the message contract names, with the reason it must be dead-lettered with. */
public enum PoisonKind {
    MALFORMED_JSON(Reason.MALFORMED_JSON) {
        @Override
        public Message create(Session session, UUID id) throws JMSException {
            return session.createTextMessage("{\"eventId\":\"" + id + "\",");
        }
    },
    NOT_A_JSON_OBJECT(Reason.NOT_A_JSON_OBJECT) {
        @Override
        public Message create(Session session, UUID id) throws JMSException {
            return session.createTextMessage("[\"" + id + "\"]");
        }
    },
    MISSING_FIELD(Reason.MISSING_FIELD) {
        @Override
        public Message create(Session session, UUID id) throws JMSException {
            return session.createTextMessage("{\"eventId\":\"" + id + "\",\"accountId\":\"poison\"}");
        }
    },
    INVALID_EVENT_ID(Reason.INVALID_EVENT_ID) {
        @Override
        public Message create(Session session, UUID id) throws JMSException {
            return session.createTextMessage("{\"eventId\":\"1-1-1-1-1\",\"accountId\":\"poison\",\"amountCents\":5}");
        }
    },
    INVALID_ACCOUNT_ID(PaymentRejection.INVALID_ACCOUNT_ID) {
        @Override
        public Message create(Session session, UUID id) throws JMSException {
            return session.createTextMessage(PaymentProducer.json(id, "no spaces allowed", 5));
        }
    },
    INVALID_AMOUNT(PaymentRejection.INVALID_AMOUNT) {
        @Override
        public Message create(Session session, UUID id) throws JMSException {
            return session.createTextMessage(PaymentProducer.json(id, "poison", -5));
        }
    },
    EMPTY_BODY(Reason.EMPTY_BODY) {
        @Override
        public Message create(Session session, UUID id) throws JMSException {
            return session.createTextMessage("");
        }
    },
    BODY_TOO_LARGE(Reason.BODY_TOO_LARGE) {
        @Override
        public Message create(Session session, UUID id) throws JMSException {
            return session.createTextMessage(PaymentProducer.json(id, "poison", 5) + " ".repeat(70_000));
        }
    },
    INVALID_ENCODING(Reason.INVALID_ENCODING) {
        @Override
        public Message create(Session session, UUID id) throws JMSException {
            BytesMessage latin1 = session.createBytesMessage();
            latin1.writeBytes(PaymentProducer.json(id, "caf\u00e9", 5).getBytes(StandardCharsets.ISO_8859_1));
            return latin1;
        }
    },
    UNSUPPORTED_MESSAGE_TYPE(Reason.UNSUPPORTED_MESSAGE_TYPE) {
        @Override
        public Message create(Session session, UUID id) throws JMSException {
            MapMessage map = session.createMapMessage();
            map.setString("eventId", id.toString());
            return map;
        }
    };

    private final Rejection.Code reason;

    PoisonKind(Rejection.Code reason) {
        this.reason = reason;
    }

    public Rejection.Code reason() {
        return reason;
    }

    /** The message; {@code id} makes it unique, so that the dead-letter queue can be matched against what was sent. */
    public abstract Message create(Session session, UUID id) throws JMSException;
}
