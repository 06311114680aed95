package org.idempotent.bench;

import jakarta.annotation.Priority;
import jakarta.interceptor.AroundInvoke;
import jakarta.interceptor.Interceptor;
import jakarta.interceptor.InvocationContext;
import jakarta.jms.Message;
import jakarta.persistence.EntityManager;
import jakarta.persistence.PersistenceContext;
import org.idempotent.delivery.entity.Outcome;
import org.idempotent.payment.control.PaymentMessageParser;
import org.idempotent.payment.control.Payments;
import org.idempotent.payment.entity.PaymentEvent;

/**
 * Benchmark-only: added to a copy of the WAR that {@link ThroughputBenchmark} builds; never part of the product WAR.
 * Bound to the consumer's {@code onMessage} (an ejb-jar.xml) it parses and validates the message and does nothing
 * else, so the adapter acknowledges it (the container ceiling); bound to {@code EventProcessor.apply} (a CDI
 * interceptor, by {@link BindToApply}) it applies the payment without the processed_events insert (what the dedup
 * costs).
 */
@Interceptor
@BenchBinding
@Priority(Interceptor.Priority.APPLICATION)
public class BenchShortcut {

    @PersistenceContext
    EntityManager em;

    @AroundInvoke
    public Object shortcut(InvocationContext invocation) throws Exception {
        if (invocation.getMethod().getName().equals("onMessage")) {
            PaymentMessageParser.read((Message) invocation.getParameters()[0]);
            return null;
        }
        PaymentEvent event = (PaymentEvent) invocation.getParameters()[0];
        // apply, inside its REQUIRES_NEW transaction: the guarded upsert alone.
        int applied = em.createNativeQuery(Payments.GUARDED_UPSERT)
                .setParameter(1, event.accountId())
                .setParameter(2, event.amountCents())
                .setParameter(3, event.eventId())
                .executeUpdate();
        return applied == 1 ? Outcome.APPLIED : Outcome.ALREADY_APPLIED;
    }
}
