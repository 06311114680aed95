package org.idempotent.bench;

import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.stream.Collectors;
import java.util.stream.Stream;

/**
 * What the worst commits of a phase waited for: for each of the ten worst send-to-commit events, the consumers'
 * backends' wait events sampled within its [send, commit] (not its own backend's: nothing ties an event to one), what
 * else ran (retention's statements, autovacuum, the checkpointer), the machine's run queue and the collectors' pauses
 * of Payara and the broker that overlapped it; then the consumers' waits over the phase, and around a purge's start.
 */
final class WaitAttribution {

    private static final int WORST = 10;
    private static final int TOP = 5;
    private static final long MINUTE = Duration.ofMinutes(1).toNanos() / 1000;

    private final WaitSampler samples;
    private final List<GcPauses.Pause> payara;
    private final List<GcPauses.Pause> broker;

    WaitAttribution(WaitSampler samples, List<GcPauses.Pause> payara, List<GcPauses.Pause> broker) {
        this.samples = samples;
        this.payara = payara;
        this.broker = broker;
    }

    /** {@code times}: per event, send called, send returned, transaction start, commit (epoch microseconds). */
    void print(List<long[]> times, Instant purgeFrom) {
        long origin = samples.start();
        System.out.println("    the worst send -> commit, sent at +s into the phase; the consumers' backends' waits"
                + " sampled meanwhile (x samples of 10 ms), what else ran, the run queue, GC pauses:");
        List<long[]> worst = worst(times, Long.MIN_VALUE, Long.MAX_VALUE);
        worst.forEach(event -> System.out.println("      " + line(event, origin)));
        if (purgeFrom != null) {
            long from = micros(purgeFrom);
            Set<long[]> shown = new HashSet<>(worst);
            List<long[]> minute = worst(times, from, from + MINUTE).stream()
                    .filter(event -> !shown.contains(event))
                    .toList();
            System.out.printf("    of the minute from the purge's start, %d more:%n", minute.size());
            minute.forEach(event -> System.out.println("      " + line(event, origin)));
            System.out.println("    the minute before the purge: " + window(from - MINUTE, from));
            System.out.println("    the minute from its start:   " + window(from, from + MINUTE));
        }
        System.out.println("    the whole phase:             " + window(Long.MIN_VALUE, Long.MAX_VALUE - 1));
    }

    private static List<long[]> worst(List<long[]> times, long from, long to) {
        return times.stream()
                .filter(event -> event[0] >= from && event[0] < to)
                .sorted(Comparator.comparingLong((long[] event) -> event[3] - event[0])
                        .reversed())
                .limit(WORST)
                .toList();
    }

    private String line(long[] event, long origin) {
        long from = event[0];
        long to = event[3];
        Seen seen = seen(from, to);
        short[] queues = samples.runQueues(from, to);
        return String.format(
                Locale.ROOT,
                "%7.1f ms = send %.1f + to tx %.1f + tx %.1f, at +%.1f s, %d ticks | %s | also %s | run queue max %s"
                        + " | GC %s",
                (to - from) / 1e3,
                (event[1] - event[0]) / 1e3,
                (event[2] - event[1]) / 1e3,
                (event[3] - event[2]) / 1e3,
                (from - origin) / 1e6,
                queues.length,
                counts(seen.consumers()),
                counts(seen.others()),
                queues.length == 0 ? "-" : String.valueOf(queues[queues.length - 1]),
                pauses(from, to));
    }

    /** The consumers' waits as shares of their samples, what else ran per tick, and the run queue, within a window. */
    private String window(long from, long to) {
        Seen seen = seen(from, to);
        short[] queues = samples.runQueues(from, to);
        if (queues.length == 0) {
            return "no samples";
        }
        int total =
                seen.consumers().values().stream().mapToInt(Integer::intValue).sum();
        return String.format(
                Locale.ROOT,
                "%,d ticks, %.1f consumers' backends busy per tick: %s | also per tick %s | run queue p50 %d,"
                        + " p99 %d, max %d",
                queues.length,
                total / (double) queues.length,
                shares(seen.consumers(), total),
                shares(seen.others(), queues.length),
                queues[queues.length / 2],
                queues[Math.max(0, (int) Math.ceil(0.99 * queues.length) - 1)],
                queues[queues.length - 1]);
    }

    /** The consumers' samples by wait event, and the others' by who they are. */
    private record Seen(Map<String, Integer> consumers, Map<String, Integer> others) {}

    private Seen seen(long from, long to) {
        Seen seen = new Seen(new HashMap<>(), new HashMap<>());
        samples.rows(from, to, (who, wait) -> {
            if (who.equals(WaitSampler.CONSUMER)) {
                seen.consumers().merge(wait, 1, Integer::sum);
            } else {
                seen.others().merge(who, 1, Integer::sum);
            }
        });
        return seen;
    }

    private static String counts(Map<String, Integer> counts) {
        return counts.isEmpty()
                ? "-"
                : top(counts).map(e -> e.getKey() + " x" + e.getValue()).collect(Collectors.joining(", "));
    }

    private static String shares(Map<String, Integer> counts, int total) {
        return counts.isEmpty()
                ? "-"
                : top(counts)
                        .map(e -> String.format(Locale.ROOT, "%s %.0f%%", e.getKey(), 100.0 * e.getValue() / total))
                        .collect(Collectors.joining(", "));
    }

    private static Stream<Map.Entry<String, Integer>> top(Map<String, Integer> counts) {
        return counts.entrySet().stream()
                .sorted(Map.Entry.<String, Integer>comparingByValue().reversed())
                .limit(TOP);
    }

    /** The pauses of either JVM that overlapped [from, to]: their count and milliseconds, per JVM. */
    private String pauses(long from, long to) {
        String ofPayara = pauses("Payara", payara, from, to);
        String ofBroker = pauses("broker", broker, from, to);
        if (ofPayara.isEmpty() && ofBroker.isEmpty()) {
            return "-";
        }
        return (ofPayara + " " + ofBroker).strip();
    }

    private static String pauses(String jvm, List<GcPauses.Pause> pauses, long from, long to) {
        List<GcPauses.Pause> overlapping =
                pauses.stream().filter(p -> p.overlaps(from, to)).toList();
        if (overlapping.isEmpty()) {
            return "";
        }
        return String.format(
                Locale.ROOT,
                "%s %d: %.1f ms",
                jvm,
                overlapping.size(),
                overlapping.stream().mapToDouble(GcPauses.Pause::millis).sum());
    }

    static long micros(Instant instant) {
        return ChronoUnit.MICROS.between(Instant.EPOCH, instant);
    }
}
