package org.idempotent.delivery.control;

import jakarta.annotation.Resource;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.inject.Inject;
import jakarta.persistence.EntityManager;
import jakarta.persistence.PersistenceContext;
import jakarta.persistence.PersistenceException;
import jakarta.transaction.TransactionSynchronizationRegistry;
import jakarta.transaction.Transactional;
import jakarta.transaction.Transactional.TxType;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.Optional;
import java.util.UUID;
import org.idempotent.delivery.entity.DeliveredEvent;
import org.idempotent.delivery.entity.Outcome;
import org.idempotent.delivery.entity.ProcessedEvent;
import org.idempotent.delivery.entity.RejectedMessage;
import org.idempotent.telemetry.Tracing;

/**
 * Applies one event of any kind exactly once, in one local transaction on the non-XA PostgreSQL pool: its dedup record
 * and its type's applier ({@link EventType#apply}), which writes the business rows on the same connection.
 *
 * <p>Insert-first: the dedup row is written and flushed before anything else, so the primary key of
 * {@code processed_events} decides between two concurrent deliveries of the same event, with no check-then-act window.
 * The applier's business write is a second, independent guard.
 *
 * <p>A CDI bean with container-managed JTA transactions ({@code @Transactional}), not an EJB: the same transactions
 * without an EJB invocation per message. Its rollback rules are CDI's, which ignore {@code @ApplicationException}: any
 * unchecked exception, {@link RejectedMessage} included, rolls the transaction back, and a duplicate marks it
 * rollback-only.
 */
@ApplicationScoped
public class EventProcessor {

    /** The dedup insert's span, a child of the delivery's. */
    static final String RECORD_SPAN = "INSERT processed_events";

    static final String RELEASED_SINCE =
            "SELECT count(r) FROM ReleasedEvent r WHERE r.eventId = :eventId AND r.releasedAt > :since";

    @PersistenceContext
    EntityManager em;

    @Resource
    TransactionSynchronizationRegistry transaction;

    @Inject
    Tracing tracing;

    /**
     * Runs in its own transaction, which commits before the caller acknowledges the message: if the JVM dies between
     * the two, the redelivery finds the event recorded and is a {@link Outcome#DUPLICATE}.
     */
    @Transactional(TxType.REQUIRES_NEW)
    public <E extends DeliveredEvent> Outcome apply(E event, EventType<E> type) {
        try {
            if (!tracing.statement(RECORD_SPAN, "INSERT", "processed_events", () -> recorded(event, type.kind()))) {
                transaction.setRollbackOnly();
                return Outcome.DUPLICATE;
            }
            Outcome outcome = tracing.statement("apply " + type.kind(), "WITH", type.kind(), () -> type.apply(event));
            if (outcome != Outcome.APPLIED && outcome != Outcome.ALREADY_APPLIED) {
                throw new IllegalStateException(type.kind() + "'s applier answered " + outcome);
            }
            return outcome;
        } catch (PersistenceException e) {
            DatabaseFailure failure = DatabaseFailure.of(e);
            if (failure.isDedupKey()) {
                transaction.setRollbackOnly();
                return Outcome.DUPLICATE;
            }
            // Refused or transient: the delivery's breaker sorts it (DatabaseFailure) and counts it as the database's.
            throw e;
        }
    }

    /**
     * Writes the event's dedup record, flushed so that a unique violation is raised here. False for a duplicate: the
     * unique key refused it, an answer, not the statement's failure.
     */
    private boolean recorded(DeliveredEvent event, String kind) {
        try {
            em.persist(new ProcessedEvent(event, kind));
            em.flush();
            return true;
        } catch (PersistenceException e) {
            if (DatabaseFailure.of(e).isDedupKey()) {
                return false;
            }
            throw e;
        }
    }

    /**
     * The dedup record of an event, empty if there is none (never processed, forgotten or purged). Read after {@link
     * #apply} lost the insert race, the unique key alone decided who was first: this only tells a true duplicate from a
     * conflicting reuse of the ID. One SELECT, so no transaction: a transaction would add two round trips.
     */
    @Transactional(TxType.NOT_SUPPORTED)
    public Optional<ProcessedEvent> recordOf(UUID eventId) {
        return Optional.ofNullable(em.find(ProcessedEvent.class, eventId));
    }

    /**
     * Whether an administrator released the event from quarantine since {@code since}: only asked for an event past
     * the horizon. A release counts for one horizon only: the copy it moved back is applied within seconds and
     * recorded, and once retention has purged that record, a release still in force would let a later stale copy
     * through a second time.
     */
    @Transactional(TxType.NOT_SUPPORTED)
    public boolean releasedSince(UUID eventId, Instant since) {
        return em.createQuery(RELEASED_SINCE, Long.class)
                        .setParameter("eventId", eventId)
                        .setParameter("since", since.atOffset(ZoneOffset.UTC))
                        .getSingleResult()
                > 0;
    }
}
