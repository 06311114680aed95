package org.idempotent.operations.boundary;

/**
 * The consumer's counters over JMX, {@value PaymentsJmx#OBJECT_NAME}: the same figures as /metrics, for JConsole,
 * VisualVM and the server's JMX monitoring service.
 */
public interface PaymentsMXBean {

    long getApplied();

    long getDuplicates();

    long getAlreadyApplied();

    long getConflicts();

    long getRejected();

    long getFailed();

    double getProcessingMeanMillis();

    double getDuplicateAgeMaxSeconds();

    /** -1 when unknown (the database did not answer). */
    long getProcessedEventsApproximately();

    /** -1 when unknown (the table is empty, or the database did not answer). */
    double getOldestProcessedEventAgeSeconds();

    long getLongestDeliveryInProgressMillis();
}
