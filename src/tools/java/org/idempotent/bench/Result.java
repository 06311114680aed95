package org.idempotent.bench;

/**
 * One measured pass; {@code fromJvmStart}: seconds from the start of the consumer's JVM to the last acknowledgement,
 * for a pass that began with the JVM (0 otherwise); {@code cpuMillis}: the whole machine's CPU per message in the
 * pass (the consumer's JVM, the broker and PostgreSQL; 0 if not measured).
 */
record Result(
        String variant,
        int concurrency,
        int messages,
        double seconds,
        String check,
        double fromJvmStart,
        double cpuMillis) {

    /** Suffix of the variant names of the first pass of each container run. */
    static final String COLD = ", cold start";

    double rate() {
        return messages / seconds;
    }
}
