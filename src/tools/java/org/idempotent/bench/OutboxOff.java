package org.idempotent.bench;

import jakarta.annotation.Priority;
import jakarta.annotation.Resource;
import jakarta.interceptor.AroundInvoke;
import jakarta.interceptor.Interceptor;
import jakarta.interceptor.InvocationContext;
import jakarta.persistence.EntityManager;
import jakarta.persistence.PersistenceContext;
import jakarta.persistence.PersistenceException;
import jakarta.transaction.TransactionSynchronizationRegistry;
import org.idempotent.delivery.control.DatabaseFailure;
import org.idempotent.delivery.entity.Outcome;
import org.idempotent.delivery.entity.ProcessedEvent;
import org.idempotent.payment.control.Payments;
import org.idempotent.payment.entity.PaymentEvent;

/**
 * Benchmark-only, like {@link BenchShortcut}: bound to {@code EventProcessor.apply} in a copy of the WAR, it applies
 * the payment as the product did before the outbox (the dedup insert, then the guarded upsert without the outbox row),
 * so that {@link ThroughputBenchmark} can set the product beside it. The relay then finds nothing to publish.
 */
@Interceptor
@BenchBinding
@Priority(Interceptor.Priority.APPLICATION)
public class OutboxOff {

    static final String UPSERT_WITHOUT_OUTBOX = """
            INSERT INTO accounts (id, balance_cents, last_event_id, updated_at)
            VALUES (?1, ?2, ?3, now())
            ON CONFLICT (id) DO UPDATE
               SET balance_cents = accounts.balance_cents + EXCLUDED.balance_cents,
                   last_event_id = EXCLUDED.last_event_id,
                   updated_at = EXCLUDED.updated_at
             WHERE accounts.last_event_id IS DISTINCT FROM EXCLUDED.last_event_id""";

    @PersistenceContext
    EntityManager em;

    @Resource
    TransactionSynchronizationRegistry transaction;

    @AroundInvoke
    public Object withoutOutbox(InvocationContext invocation) {
        PaymentEvent event = (PaymentEvent) invocation.getParameters()[0];
        try {
            em.persist(new ProcessedEvent(event, Payments.KIND));
            em.flush();
        } catch (PersistenceException e) {
            if (DatabaseFailure.of(e).isDedupKey()) {
                transaction.setRollbackOnly();
                return Outcome.DUPLICATE;
            }
            throw e;
        }
        int applied = em.createNativeQuery(UPSERT_WITHOUT_OUTBOX)
                .setParameter(1, event.accountId())
                .setParameter(2, event.amountCents())
                .setParameter(3, event.eventId())
                .executeUpdate();
        return applied == 1 ? Outcome.APPLIED : Outcome.ALREADY_APPLIED;
    }
}
