package org.idempotent.bench;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.time.format.DateTimeFormatter;
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
