package org.idempotent.refund.control;

import jakarta.enterprise.context.ApplicationScoped;
import jakarta.inject.Inject;
import jakarta.jms.JMSException;
import jakarta.jms.Message;
import jakarta.persistence.EntityManager;
import jakarta.persistence.PersistenceContext;
import java.util.List;
import org.idempotent.delivery.control.EventType;
import org.idempotent.delivery.entity.NotYetApplicable;
import org.idempotent.delivery.entity.Outcome;
import org.idempotent.delivery.entity.RejectedMessage;
import org.idempotent.delivery.entity.Rejection;
import org.idempotent.refund.entity.RefundEvent;
import org.idempotent.refund.entity.RefundRejection;
import org.idempotent.telemetry.TraceContext;
import org.idempotent.telemetry.Tracing;

/**
 * Refunds as an event type: the contract ({@link RefundMessageParser}) and the refund's SQL, in the transaction of its
 * dedup record. The refunded payment's ledger row (payments, written by the payment's own statement) is locked first,
 * so that two refunds of one payment are applied one after the other and their sum is checked against the payment's
 * amount; a balance never goes below zero, since an account's balance is the sum of its payments less the refunds of
 * each, and no payment is refunded past its amount.
 */
@ApplicationScoped
public class Refunds implements EventType<RefundEvent> {

    public static final String KIND = "refund";

    /** The payment refunded, locked until the transaction ends, and whether this refund is in its ledger already. */
    static final String PAYMENT_FOR_UPDATE = """
            SELECT p.amount_cents, p.refunded_cents,
                   EXISTS (SELECT 1 FROM refunds r WHERE r.event_id = CAST(?2 AS uuid))
              FROM payments p
             WHERE p.event_id = CAST(?1 AS uuid)
               FOR UPDATE OF p""";

    /**
     * Records the refund (its second guard: the refunds ledger's key, which skips a refund already applied), adds it
     * to the payment's refunded amount, takes it off the account's balance and writes its announcement to the outbox
     * with the new balance and the account's next sequence number, the same sequence as its payments: one statement,
     * so that the announcement exists if and only if the refund committed. The amount announced is the change to the
     * balance: negative.
     */
    static final String GUARDED_REFUND = """
            WITH refund (event_id, payment_event_id, amount_cents, trace_parent, trace_state) AS (
                VALUES (CAST(?1 AS uuid), CAST(?2 AS uuid), CAST(?3 AS bigint), CAST(?4 AS text), CAST(?5 AS text))),
            recorded AS (
                INSERT INTO refunds (event_id, payment_event_id, amount_cents)
                SELECT event_id, payment_event_id, amount_cents FROM refund
                ON CONFLICT (event_id) DO NOTHING
                RETURNING event_id, payment_event_id, amount_cents),
            refunded AS (
                UPDATE payments p
                   SET refunded_cents = p.refunded_cents + recorded.amount_cents
                  FROM recorded
                 WHERE p.event_id = recorded.payment_event_id
                RETURNING p.account_id, recorded.event_id, recorded.amount_cents),
            applied AS (
                UPDATE accounts a
                   SET balance_cents = a.balance_cents - refunded.amount_cents,
                       last_event_id = refunded.event_id,
                       updated_at = now(),
                       sequence = a.sequence + 1
                  FROM refunded
                 WHERE a.id = refunded.account_id
                RETURNING a.id, a.balance_cents, a.sequence, refunded.event_id, refunded.amount_cents)
            INSERT INTO payment_announcements (event_id, account_id, amount_cents, balance_cents, account_sequence,
                                               applied_at, kind, trace_parent, trace_state)
            SELECT applied.event_id, id, -applied.amount_cents, balance_cents, sequence, clock_timestamp(), 'refund',
                   refund.trace_parent, refund.trace_state
              FROM applied, refund""";

    @PersistenceContext
    EntityManager em;

    @Inject
    Tracing tracing;

    @Override
    public String kind() {
        return KIND;
    }

    @Override
    public RefundEvent read(Message message) throws JMSException {
        return RefundMessageParser.read(message);
    }

    /**
     * @throws NotYetApplicable if the payment is not applied (yet): it may arrive after its refund
     * @throws RejectedMessage if the refund would take the payment's refunds past its amount
     */
    @Override
    public Outcome apply(RefundEvent refund) {
        List<?> found = em.createNativeQuery(PAYMENT_FOR_UPDATE)
                .setParameter(1, refund.paymentEventId())
                .setParameter(2, refund.eventId())
                .getResultList();
        if (found.isEmpty()) {
            throw new NotYetApplicable(new Rejection(
                    RefundRejection.UNKNOWN_PAYMENT,
                    "refund " + refund.eventId() + " of payment " + refund.paymentEventId()
                            + ": no such payment was applied while the refund was delivered again and again"));
        }
        Object[] payment = (Object[]) found.get(0);
        long amount = ((Number) payment[0]).longValue();
        long refunded = ((Number) payment[1]).longValue();
        if (Boolean.TRUE.equals(payment[2])) {
            return Outcome.ALREADY_APPLIED;
        }
        if (refunded + refund.amountCents() > amount) {
            throw new RejectedMessage(
                    RefundRejection.REFUND_EXCEEDS_PAYMENT,
                    "refund " + refund.eventId() + " of " + refund.amountCents() + " cents exceeds payment "
                            + refund.paymentEventId() + ": " + amount + " cents paid, " + refunded
                            + " refunded already");
        }
        TraceContext trace = tracing.current();
        int applied = em.createNativeQuery(GUARDED_REFUND)
                .setParameter(1, refund.eventId())
                .setParameter(2, refund.paymentEventId())
                .setParameter(3, refund.amountCents())
                .setParameter(4, trace.traceparent())
                .setParameter(5, trace.tracestate())
                .executeUpdate();
        return applied == 1 ? Outcome.APPLIED : Outcome.ALREADY_APPLIED;
    }
}
