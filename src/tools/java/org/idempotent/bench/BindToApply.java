package org.idempotent.bench;

import jakarta.enterprise.event.Observes;
import jakarta.enterprise.inject.spi.Extension;
import jakarta.enterprise.inject.spi.ProcessAnnotatedType;
import org.idempotent.payment.control.PaymentProcessor;

/**
 * Benchmark-only, registered in a copy of the WAR (META-INF/services): adds {@link BenchBinding} to
 * {@code PaymentProcessor.apply}, so that the benchmark interceptor in that copy runs inside its transaction.
 */
public class BindToApply implements Extension {

    void bind(@Observes ProcessAnnotatedType<PaymentProcessor> type) {
        type.configureAnnotatedType()
                .filterMethods(method -> method.getJavaMember().getName().equals("apply"))
                .forEach(method -> method.add(BenchBinding.Literal.INSTANCE));
    }
}
