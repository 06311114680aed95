package org.idempotent.bench;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.SQLException;
import java.time.Instant;
import java.util.List;
import java.util.Locale;

/**
 * What a phase of the volume benchmark is watched by, from its start to its end: the 10 ms samples of the backends'
 * waits ({@link WaitSampler}, written to {@code volume-waits-<phase>.csv}), the cluster's checkpoint and WAL counters
 * ({@link ServerStats}), and the lines PostgreSQL logged meanwhile (lock waits over deadlock_timeout, checkpoints,
 * slow statements: the benchmark's cluster is set to log them); printed with the worst commits' attribution.
 */
final class PhaseWaits implements AutoCloseable {

    private final BenchStack stack;
    private final Path payaraGcLog;
    private final Path csv;
    private final WaitSampler sampler;
    private final ServerStats before;
    private final long logFrom;
    private ServerStats after;
    private long logTo;

    private PhaseWaits(BenchStack stack, Path out, String phase, Path payaraGcLog) throws SQLException, IOException {
        this.stack = stack;
        this.payaraGcLog = payaraGcLog;
        this.csv = out.resolve("volume-waits-" + slug(phase) + ".csv");
        this.before = ServerStats.take(stack.settings);
        this.logFrom = logSize();
        this.sampler = WaitSampler.start(stack.settings, csv);
    }

    static PhaseWaits start(BenchStack stack, Path out, String phase, Path payaraGcLog)
            throws SQLException, IOException {
        return new PhaseWaits(stack, out, phase, payaraGcLog);
    }

    /** The phase is over: the sampling stops, the counters are read again. */
    void stop() throws SQLException, IOException {
        sampler.close();
        after = ServerStats.take(stack.settings);
        logTo = logSize();
    }

    /** {@code times}: every event of the phase (CommitLatency's times); {@code purgeFrom} null without a purge. */
    void print(List<long[]> times, Instant purgeFrom) throws IOException {
        System.out.println("    " + after.since(before));
        System.out.println("    PostgreSQL's log meanwhile: " + logged() + "; samples in " + csv);
        new WaitAttribution(sampler, GcPauses.all(payaraGcLog), GcPauses.all(stack.brokerGcLog))
                .print(times, purgeFrom);
    }

    /** Counts of the lines the cluster logged in the phase, by kind. */
    private String logged() throws IOException {
        if (logTo <= logFrom) {
            return "nothing";
        }
        String text;
        try (InputStream log = Files.newInputStream(stack.postgres.log())) {
            log.skipNBytes(logFrom);
            text = new String(
                    log.readNBytes((int) Math.min(Integer.MAX_VALUE - 8, logTo - logFrom)), StandardCharsets.UTF_8);
        }
        return String.format(
                Locale.ROOT,
                "%d lock waits over deadlock_timeout (\"still waiting for\"), %d checkpoints started (%d complete),"
                        + " %d statements over log_min_duration_statement",
                count(text, "still waiting for"),
                count(text, "checkpoint starting"),
                count(text, "checkpoint complete"),
                count(text, "duration: "));
    }

    private static int count(String text, String what) {
        int count = 0;
        for (int at = text.indexOf(what); at >= 0; at = text.indexOf(what, at + what.length())) {
            count++;
        }
        return count;
    }

    private long logSize() throws IOException {
        Path log = stack.postgres.log();
        return Files.exists(log) ? Files.size(log) : 0;
    }

    private static String slug(String phase) {
        return phase.toLowerCase(Locale.ROOT).replaceAll("[^a-z0-9]+", "-").replaceAll("^-|-$", "");
    }

    @Override
    public void close() {
        sampler.close();
    }
}
