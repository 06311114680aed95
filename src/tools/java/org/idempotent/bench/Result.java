package org.idempotent.bench;

/**
 * One measured pass; {@code fromJvmStart}: seconds from the start of the consumer's JVM to the last acknowledgement,
 * for a pass that began with the JVM (0 otherwise); {@code cpuMillis}: the whole machine's CPU per message in the
 * pass (the consumer's JVM, the broker and PostgreSQL; 0 if not measured); {@code toReady}: seconds from the start of
 * Payara's JVM to its first UP on /health/ready with the application's check in it, for a cold pass (0 otherwise);
 * {@code outbox}: the writes to the outbox and to the relay's position in the pass (--outbox-writes), else null;
 * {@code relay}: the outbox relay's passes in the pass (--relay-passes), else null; {@code analyses}: autovacuum's
 * analyses of the database's tables during the pass.
 */
record Result(
        String variant,
        int concurrency,
        int messages,
        double seconds,
        String check,
        double fromJvmStart,
        double cpuMillis,
        double toReady,
        OutboxWrites.Writes outbox,
        RelayPasses.Passes relay,
        long analyses) {

    /** Suffix of the variant names of the first pass of each container run. */
    static final String COLD = ", cold start";

    /** Suffix of the third pass of a run (--steady): the JIT done with the path, as in a consumer running for hours. */
    static final String STEADY = ", steady";

    Result ready(double seconds) {
        return new Result(
                variant,
                concurrency,
                messages,
                this.seconds,
                check,
                fromJvmStart,
                cpuMillis,
                seconds,
                outbox,
                relay,
                analyses);
    }

    double rate() {
        return messages / seconds;
    }
}
