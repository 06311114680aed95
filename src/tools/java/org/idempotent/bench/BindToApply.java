package org.idempotent.bench;

import jakarta.enterprise.event.Observes;
import jakarta.enterprise.inject.spi.Extension;
import jakarta.enterprise.inject.spi.ProcessAnnotatedType;
import org.idempotent.delivery.control.EventProcessor;

/**
 * Benchmark-only, registered in a copy of the WAR (META-INF/services): adds {@link BenchBinding} to
 * {@code EventProcessor.apply}, so that the benchmark interceptor in that copy runs inside its transaction.
 */
public class BindToApply implements Extension {

    void bind(@Observes ProcessAnnotatedType<EventProcessor> type) {
        type.configureAnnotatedType()
                .filterMethods(method -> method.getJavaMember().getName().equals("apply"))
                .forEach(method -> method.add(BenchBinding.Literal.INSTANCE));
    }
}
