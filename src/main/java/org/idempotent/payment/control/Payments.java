package org.idempotent.payment.control;

import jakarta.enterprise.context.ApplicationScoped;
import jakarta.inject.Inject;
import jakarta.jms.JMSException;
import jakarta.jms.Message;
import jakarta.persistence.EntityManager;
import jakarta.persistence.PersistenceContext;
import org.idempotent.delivery.control.EventType;
import org.idempotent.delivery.entity.Outcome;
import org.idempotent.payment.entity.PaymentEvent;
import org.idempotent.telemetry.TraceContext;
import org.idempotent.telemetry.Tracing;

/**
 * Payments as an event type: the contract ({@link PaymentMessageParser}) and the one statement that applies a payment
 * in the transaction of its dedup record.
 */
@ApplicationScoped
public class Payments implements EventType<PaymentEvent> {

    public static final String KIND = "payment";

    /**
     * Creates the account with its first payment, or adds to it unless this very event was the last one applied to
     * it, and in the same statement writes the payment's announcement to the outbox (payment_announcements) with the
     * new balance and the account's next sequence number, and records the payment in the payments ledger that refunds
     * are checked against (a payment forgotten and applied again keeps its one ledger row): a payment not applied
     * writes neither, and no announcement outlives a rollback. One statement, so the outbox costs no round trip.
     * {@code IS DISTINCT FROM}, not {@code !=}: the latter is never true while last_event_id is NULL.
     * clock_timestamp(): the latest time before the commit. The row keeps the transaction's trace context (null while
     * tracing is off), the parent of the relay's publish.
     */
    public static final String GUARDED_UPSERT = """
            WITH payment (account_id, amount_cents, event_id, trace_parent, trace_state) AS (
                VALUES (CAST(?1 AS text), CAST(?2 AS bigint), CAST(?3 AS uuid), CAST(?4 AS text), CAST(?5 AS text))),
            applied AS (
                INSERT INTO accounts (id, balance_cents, last_event_id, updated_at, sequence)
                SELECT account_id, amount_cents, event_id, now(), 1 FROM payment
                ON CONFLICT (id) DO UPDATE
                   SET balance_cents = accounts.balance_cents + EXCLUDED.balance_cents,
                       last_event_id = EXCLUDED.last_event_id,
                       updated_at = EXCLUDED.updated_at,
                       sequence = accounts.sequence + 1
                 WHERE accounts.last_event_id IS DISTINCT FROM EXCLUDED.last_event_id
                RETURNING id, balance_cents, sequence),
            ledger AS (
                INSERT INTO payments (event_id, account_id, amount_cents)
                SELECT payment.event_id, applied.id, payment.amount_cents FROM applied, payment
                ON CONFLICT (event_id) DO NOTHING)
            INSERT INTO payment_announcements (event_id, account_id, amount_cents, balance_cents, account_sequence,
                                               applied_at, trace_parent, trace_state)
            SELECT payment.event_id, applied.id, payment.amount_cents, applied.balance_cents, applied.sequence,
                   clock_timestamp(), payment.trace_parent, payment.trace_state
              FROM applied, payment""";

    @PersistenceContext
    EntityManager em;

    @Inject
    Tracing tracing;

    @Override
    public String kind() {
        return KIND;
    }

    @Override
    public PaymentEvent read(Message message) throws JMSException {
        return PaymentMessageParser.read(message);
    }

    @Override
    public Outcome apply(PaymentEvent event) {
        TraceContext trace = tracing.current();
        int applied = em.createNativeQuery(GUARDED_UPSERT)
                .setParameter(1, event.accountId())
                .setParameter(2, event.amountCents())
                .setParameter(3, event.eventId())
                .setParameter(4, trace.traceparent())
                .setParameter(5, trace.tracestate())
                .executeUpdate();
        return applied == 1 ? Outcome.APPLIED : Outcome.ALREADY_APPLIED;
    }
}
