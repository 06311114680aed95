package org.idempotent.bench;

/**
 * One measured pass; {@code fromJvmStart}: seconds from the start of Payara's JVM to the last acknowledgement, for a
 * pass that began with the JVM (0 otherwise).
 */
record Result(String variant, int concurrency, int messages, double seconds, String check, double fromJvmStart) {

    /** Suffix of the variant names of the first pass of each container run. */
    static final String COLD = ", cold start";

    double rate() {
        return messages / seconds;
    }
}
