package org.idempotent.bench;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.time.format.DateTimeFormatter;
import java.time.temporal.ChronoUnit;
import java.util.List;
import java.util.Locale;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Payara's garbage-collection pauses in a window, from its GC log (-Xlog:gc with wall-clock time, {@link #OPTION}): to
 * tell a latency tail that is the collector's from one that is not.
 */
final class GcPauses {

    private static final Pattern PAUSE = Pattern.compile("^\\[([^\\]]+)\\].* Pause .* ([0-9.]+)ms$");
    private static final DateTimeFormatter TIME = DateTimeFormatter.ofPattern("yyyy-MM-dd'T'HH:mm:ss.SSSZ");

    private GcPauses() {}

    /** The JVM option that writes the log this reads. */
    static String option(Path log) {
        return "-Xlog:gc:file=" + log.toAbsolutePath() + ":time";
    }

    /**
     * A pause, in epoch microseconds: the line's time is when it was logged, the pause's end (unified logging's
     * {@code time} decorator), so it began its length before.
     */
    record Pause(long from, long to, double millis) {

        boolean overlaps(long start, long end) {
            return from <= end && to >= start;
        }
    }

    /** Every pause in the log, or none when there is no log (yet). */
    static List<Pause> all(Path log) throws IOException {
        if (!Files.exists(log)) {
            return List.of();
        }
        return Files.readAllLines(log).stream()
                .map(PAUSE::matcher)
                .filter(Matcher::matches)
                .map(m -> {
                    Instant at = OffsetDateTime.parse(m.group(1), TIME).toInstant();
                    long end = ChronoUnit.MICROS.between(Instant.EPOCH, at);
                    double millis = Double.parseDouble(m.group(2));
                    return new Pause(end - Math.round(millis * 1000), end, millis);
                })
                .toList();
    }

    /** Count, total, longest and those of 20 ms or more, of the pauses that began within [from, to). */
    static String between(Path log, Instant from, Instant to) throws IOException {
        List<Double> pauses = Files.readAllLines(log).stream()
                .map(PAUSE::matcher)
                .filter(Matcher::matches)
                .filter(m -> {
                    Instant at = OffsetDateTime.parse(m.group(1), TIME).toInstant();
                    return !at.isBefore(from) && at.isBefore(to);
                })
                .map(m -> Double.parseDouble(m.group(2)))
                .toList();
        return String.format(
                Locale.ROOT,
                "GC: %d pauses, %.0f ms in all, longest %.1f ms, %d of 20 ms or more",
                pauses.size(),
                pauses.stream().mapToDouble(Double::doubleValue).sum(),
                pauses.stream().mapToDouble(Double::doubleValue).max().orElse(0),
                pauses.stream().filter(pause -> pause >= 20).count());
    }
}
