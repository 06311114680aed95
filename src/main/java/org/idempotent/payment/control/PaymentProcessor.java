package org.idempotent.payment.control;

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
import org.idempotent.payment.entity.Outcome;
import org.idempotent.payment.entity.PaymentEvent;
import org.idempotent.payment.entity.ProcessedEvent;
import org.idempotent.payment.entity.RejectedMessage;
import org.idempotent.schema.boundary.SchemaMigration;

/**
 * Applies one payment event exactly once, in one local transaction on the non-XA PostgreSQL pool.
 *
 * <p>Insert-first: the dedup row is written and flushed before anything else, so the primary key of
 * {@code processed_events} decides between two concurrent deliveries of the same event, with no check-then-act window.
 * The business write is a second, independent guard.
 *
 * <p>A CDI bean with container-managed JTA transactions ({@code @Transactional}), not an EJB: the same transactions
 * without an EJB invocation per message. Its rollback rules are CDI's, which ignore {@code @ApplicationException}: any
 * unchecked exception, {@link RejectedMessage} included, rolls the transaction back, and a duplicate marks it
 * rollback-only.
 */
@ApplicationScoped
public class PaymentProcessor {

    /**
     * Creates the account with its first payment, or adds to it unless this very event was the last one applied to
     * it, and in the same statement writes the payment's announcement to the outbox (payment_announcements) with the
     * new balance and the account's next sequence number: a payment not applied writes none, and no announcement
     * outlives a rollback. One statement, so the outbox costs no round trip. {@code IS DISTINCT FROM}, not {@code
     * !=}: the latter is never true while last_event_id is NULL. clock_timestamp(): the latest time before the commit.
     */
    public static final String GUARDED_UPSERT = """
            WITH payment (account_id, amount_cents, event_id) AS (
                VALUES (CAST(?1 AS text), CAST(?2 AS bigint), CAST(?3 AS uuid))),
            applied AS (
                INSERT INTO accounts (id, balance_cents, last_event_id, updated_at, sequence)
                SELECT account_id, amount_cents, event_id, now(), 1 FROM payment
                ON CONFLICT (id) DO UPDATE
                   SET balance_cents = accounts.balance_cents + EXCLUDED.balance_cents,
                       last_event_id = EXCLUDED.last_event_id,
                       updated_at = EXCLUDED.updated_at,
                       sequence = accounts.sequence + 1
                 WHERE accounts.last_event_id IS DISTINCT FROM EXCLUDED.last_event_id
                RETURNING id, balance_cents, sequence)
            INSERT INTO payment_announcements (event_id, account_id, amount_cents, balance_cents, account_sequence,
                                               applied_at)
            SELECT payment.event_id, applied.id, payment.amount_cents, applied.balance_cents, applied.sequence,
                   clock_timestamp()
              FROM applied, payment""";

    /** The partitioned table's guard across days (V8__processed_events_by_week.sql): true if the ID is new. */
    static final String CLAIM = "SELECT processed_event_claim(CAST(?1 AS uuid))";

    static final String RELEASED_SINCE =
            "SELECT count(r) FROM ReleasedEvent r WHERE r.eventId = :eventId AND r.releasedAt > :since";

    @PersistenceContext
    EntityManager em;

    @Resource
    TransactionSynchronizationRegistry transaction;

    @Inject
    SchemaMigration schema;

    /** Read once: the layout changes only by a conversion, with the consumers stopped. */
    private volatile Boolean dedupByWeek;

    /**
     * Runs in its own transaction, which commits before the caller acknowledges the message: if the JVM dies between
     * the two, the redelivery finds the event recorded and is a {@link Outcome#DUPLICATE}.
     */
    @Transactional(TxType.REQUIRES_NEW)
    public Outcome apply(PaymentEvent event) {
        try {
            if (!record(event)) {
                transaction.setRollbackOnly();
                return Outcome.DUPLICATE;
            }
            int applied = em.createNativeQuery(GUARDED_UPSERT)
                    .setParameter(1, event.accountId())
                    .setParameter(2, event.amountCents())
                    .setParameter(3, event.eventId())
                    .executeUpdate();
            return applied == 1 ? Outcome.APPLIED : Outcome.ALREADY_APPLIED;
        } catch (PersistenceException e) {
            DatabaseFailure failure = DatabaseFailure.of(e);
            if (failure.isDedupKey()) {
                transaction.setRollbackOnly();
                return Outcome.DUPLICATE;
            }
            if (failure.kind() == DatabaseFailure.Kind.PERMANENT) {
                throw new RejectedMessage(failure.rejection());
            }
            throw e;
        }
    }

    /**
     * Writes the event's dedup record, flushed so that a unique violation is raised here. In the table partitioned by
     * week the unique key is (ID, day), so the ID is claimed first: false if a record of it is under another day.
     */
    private boolean record(PaymentEvent event) {
        if (dedupByWeek == null) {
            dedupByWeek = schema.dedupByWeek();
        }
        if (dedupByWeek) {
            Object isNew =
                    em.createNativeQuery(CLAIM).setParameter(1, event.eventId()).getSingleResult();
            if (!Boolean.TRUE.equals(isNew)) {
                return false;
            }
            em.persist(new ProcessedEvent(event, ProcessedEvent.dayOf(event, Instant.now())));
        } else {
            em.persist(new ProcessedEvent(event));
        }
        em.flush();
        return true;
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
