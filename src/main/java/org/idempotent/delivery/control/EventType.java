package org.idempotent.delivery.control;

import jakarta.jms.JMSException;
import jakarta.jms.Message;
import org.idempotent.delivery.entity.DeliveredEvent;
import org.idempotent.delivery.entity.NotYetApplicable;
import org.idempotent.delivery.entity.Outcome;
import org.idempotent.delivery.entity.RejectedMessage;

/**
 * One kind of event the consumer applies exactly once: its name, its parser and its applier. Everything else (the
 * dedup record and its unique key, the fingerprint and the conflicts queue, the horizon and quarantine, the database
 * breaker, dead letters with reasons, retention) is the same for every kind and lives in {@link Delivery}. A new kind
 * is an implementation of this, an MDB that hands its messages to {@code Delivery.receive} with it, and its SQL.
 *
 * @param <E> the event as the parser reads it
 */
public interface EventType<E extends DeliveredEvent> {

    /** The kind recorded with each event's dedup record ({@code processed_events.kind}): lower case, e.g. payment. */
    String kind();

    /**
     * Reads the message as this kind's event.
     *
     * @throws RejectedMessage if it can never be one (dead-lettered with the reason)
     * @throws JMSException if the body cannot be read from the provider (transient: redelivered)
     */
    E read(Message message) throws JMSException;

    /**
     * Applies the event inside the transaction that has just inserted its dedup record; its SQL runs on the same
     * connection and commits or rolls back with that record. The business row's own guard answers {@link
     * Outcome#ALREADY_APPLIED} when the event was applied although its record is gone (purged, forgotten).
     *
     * @return {@link Outcome#APPLIED} or {@link Outcome#ALREADY_APPLIED}
     * @throws RejectedMessage if the event can never be applied (the transaction rolls back; dead-lettered)
     * @throws NotYetApplicable if it depends on an event not applied yet (rolled back; delivered again later)
     */
    Outcome apply(E event);
}
