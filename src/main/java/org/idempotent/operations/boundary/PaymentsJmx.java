package org.idempotent.operations.boundary;

import jakarta.annotation.PostConstruct;
import jakarta.annotation.PreDestroy;
import jakarta.ejb.Singleton;
import jakarta.ejb.Startup;
import jakarta.inject.Inject;
import java.lang.management.ManagementFactory;
import java.time.Duration;
import javax.management.InstanceNotFoundException;
import javax.management.JMException;
import javax.management.MBeanServer;
import javax.management.ObjectName;
import javax.management.StandardMBean;
import org.idempotent.delivery.control.DeliveryMetrics;
import org.idempotent.delivery.entity.Outcome;
import org.idempotent.retention.control.DedupTableGauges;

/** Publishes {@link PaymentsMXBean} in the platform MBean server while the application is deployed. */
@Startup
@Singleton
public class PaymentsJmx {

    public static final String OBJECT_NAME = "org.idempotent:type=PaymentConsumer,name=payments";

    @Inject
    DeliveryMetrics metrics;

    @Inject
    DedupTableGauges table;

    private final MBeanServer server = ManagementFactory.getPlatformMBeanServer();

    @PostConstruct
    void register() {
        try {
            ObjectName name = new ObjectName(OBJECT_NAME);
            unregister(name);
            server.registerMBean(new StandardMBean(new View(metrics, table), PaymentsMXBean.class, true), name);
        } catch (JMException e) {
            throw new IllegalStateException("cannot register " + OBJECT_NAME, e);
        }
    }

    @PreDestroy
    void unregister() {
        try {
            unregister(new ObjectName(OBJECT_NAME));
        } catch (JMException e) {
            throw new IllegalStateException("cannot unregister " + OBJECT_NAME, e);
        }
    }

    /** Also removes what an earlier deployment of the application left behind if it did not stop cleanly. */
    private void unregister(ObjectName name) throws JMException {
        try {
            server.unregisterMBean(name);
        } catch (InstanceNotFoundException notRegistered) {
            // nothing to remove
        }
    }

    private record View(DeliveryMetrics metrics, DedupTableGauges table) implements PaymentsMXBean {

        @Override
        public long getApplied() {
            return metrics.count(Outcome.APPLIED);
        }

        @Override
        public long getDuplicates() {
            return metrics.count(Outcome.DUPLICATE);
        }

        @Override
        public long getAlreadyApplied() {
            return metrics.count(Outcome.ALREADY_APPLIED);
        }

        @Override
        public long getConflicts() {
            return metrics.count(Outcome.CONFLICT);
        }

        @Override
        public long getRejected() {
            return metrics.count(Outcome.REJECTED);
        }

        @Override
        public long getFailed() {
            return metrics.count(Outcome.FAILED);
        }

        @Override
        public double getProcessingMeanMillis() {
            return metrics.totals().processingMeanMillis();
        }

        @Override
        public double getDuplicateAgeMaxSeconds() {
            return metrics.totals().duplicateAgeMaxSeconds();
        }

        @Override
        public long getProcessedEventsApproximately() {
            Long rows = table.current().approximateRows();
            return rows == null ? -1 : rows;
        }

        @Override
        public double getOldestProcessedEventAgeSeconds() {
            Double age = table.current().oldestRowAgeSeconds();
            return age == null ? -1 : age;
        }

        @Override
        public long getLongestDeliveryInProgressMillis() {
            return metrics.longestInFlight().map(Duration::toMillis).orElse(0L);
        }
    }
}
