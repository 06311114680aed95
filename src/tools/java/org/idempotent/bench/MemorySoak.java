package org.idempotent.bench;

import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import org.idempotent.loadgen.MessageSet;
import org.idempotent.loadgen.Options;
import org.idempotent.loadgen.Regimes;
import org.idempotent.stack.Build;
import org.idempotent.stack.ClassHistogram;
import org.idempotent.stack.Database;
import org.idempotent.stack.OtlpReceiver;
import org.idempotent.stack.PayaraMicroProcess;
import org.idempotent.stack.PostgresCluster;
import org.idempotent.stack.Settings;

/**
 * What a consumer left running keeps: one Payara Micro with the product, warmed, then events at full speed and then
 * one by one, in slices, with the live heap after a full GC taken per class after each slice. It prints the live heap
 * at every checkpoint, each class's instances at every checkpoint for the classes that grew most, and the classes whose
 * count grew in every slice of a regime by more than the noise (a count that follows the events, not a cache filling up
 * once). Exits 1 if the live heap grew by 1 MiB or more, or any class grew with the events.
 */
final class MemorySoak {

    static final List<String> OPTIONS =
            List.of("soak", "soak-fast", "soak-one-by-one", "soak-rate", "soak-slices", "soak-traced", "soak-war");

    static final String USAGE = " --soak (what a running consumer keeps: --soak-fast N messages at full speed, then"
            + " --soak-one-by-one N at --soak-rate per second, in --soak-slices slices each, a fifth of them copies;"
            + " 120000 and 6000, over 100,000 and 5,000 distinct events; 50, 4;"
            + " --soak-traced: every span exported over OTLP to a receiver in the benchmark; --soak-war PATH: another"
            + " build's WAR)";

    /** Growth of the live heap over both regimes that fails the soak. */
    private static final long HEAP_BOUND_BYTES = 1024 * 1024;
    /**
     * A class grows with the events if it gained more than this in every slice of a regime, and more than one instance
     * per {@link #EVENTS_PER_INSTANCE} events. Below that are the steps of a warming JVM (a class loaded, constants
     * resolved, a statement cached: byte arrays gained 57 to 71 in their smallest slice of three runs) and pools
     * filling up to their bound (Artemis's string pools, Netty's recyclers); the leak this soak was made for gained
     * 160 to 420 a slice in its smallest slices (8,400 events at full speed, 420 one by one).
     */
    private static final long NOISE_INSTANCES = 100;

    private static final long EVENTS_PER_INSTANCE = 200;

    private static final Duration APPLIED_WITHIN = Duration.ofMinutes(20);
    private static final int ACCOUNTS = 1000;
    private static final double DUPLICATES = 0.2;
    private static final double REFUNDS = 0.05;

    private final Settings settings;
    private final PayaraMicroProcess micro;
    private final Path war;
    private final Map<String, ClassHistogram> checkpoints = new LinkedHashMap<>();
    /** The distinct events applied in the slice that ends at each checkpoint. */
    private final Map<String, Long> eventsIn = new LinkedHashMap<>();

    private long seed = 42;

    private MemorySoak(Settings settings, PayaraMicroProcess micro, Path war) {
        this.settings = settings;
        this.micro = micro;
        this.war = war;
    }

    static void main(Options options, Settings base, Path out) throws Exception {
        int fast = options.getInt("soak-fast", 120_000);
        int oneByOne = options.getInt("soak-one-by-one", 6_000);
        double rate = options.getDouble("soak-rate", 50);
        int slices = options.getInt("soak-slices", 4);
        if (fast < slices || oneByOne < slices || rate <= 0 || slices < 2) {
            throw new IllegalArgumentException("--soak-fast and --soak-one-by-one >= --soak-slices >= 2, a rate > 0");
        }
        Path war = options.has("soak-war") ? Path.of(options.get("soak-war", "")) : Build.WAR;
        boolean held;
        try (PostgresCluster postgres =
                        PostgresCluster.create(out.resolve("soak-postgres").toAbsolutePath(), List.of());
                BenchStack stack = BenchStack.start(postgres.serve(base), postgres, out.resolve("broker-gc.log"))) {
            Database.recreate(stack.settings);
            OtlpReceiver otlp = options.has("soak-traced") ? OtlpReceiver.counting() : null;
            String[] tracing =
                    otlp == null ? new String[0] : new String[] {"-Dotel.exporter.otlp.endpoint=" + otlp.endpoint()};
            try (PayaraMicroProcess micro = PayaraMicroProcess.startReady("bench-soak", stack.settings, war, tracing)) {
                held = new MemorySoak(stack.settings, micro, war).run(fast, oneByOne, rate, slices);
            } finally {
                if (otlp != null) {
                    System.out.printf("Tracing on: %,d spans received over OTLP/HTTP%n", otlp.received());
                    otlp.close();
                }
            }
        }
        if (!held) {
            // Only once every process it started is stopped.
            System.exit(1);
        }
    }

    private boolean run(int fast, int oneByOne, double rate, int slices) {
        System.out.printf(
                Locale.ROOT,
                "Memory soak: Payara Micro %d (%s), %,d messages at full speed then %,d one by one at %.0f/s, %d"
                        + " slices each, a fifth of them copies and 5 %% refunds; live heap per class after a full GC"
                        + " (jcmd GC.class_histogram)%n",
                micro.pid(),
                war,
                fast,
                oneByOne,
                rate,
                slices);
        // Pools, compiled code, caches filled once: what a soak must not count.
        Regimes.fullSpeed(settings, events("warm", 10_000), APPLIED_WITHIN);
        Regimes.oneByOne(settings, events("warm-single", 200), rate, APPLIED_WITHIN);
        checkpoint("start", null);
        List<String> fastPoints = new ArrayList<>(List.of("start"));
        for (int slice = 1; slice <= slices; slice++) {
            MessageSet set = events("fast", fast / slices);
            Regimes.fullSpeed(settings, set, APPLIED_WITHIN);
            fastPoints.add(checkpoint("fast " + slice + "/" + slices, set));
        }
        List<String> singlePoints = new ArrayList<>(List.of(fastPoints.get(slices)));
        for (int slice = 1; slice <= slices; slice++) {
            MessageSet set = events("single", oneByOne / slices);
            Regimes.oneByOne(settings, set, rate, APPLIED_WITHIN);
            singlePoints.add(checkpoint("one by one " + slice + "/" + slices, set));
        }
        return report(fastPoints, singlePoints);
    }

    private MessageSet events(String name, int messages) {
        return MessageSet.of(
                MessageSet.runPrefix("soak-" + name),
                seed++,
                messages,
                DUPLICATES,
                ACCOUNTS,
                0,
                MessageSet.Ids.RANDOM,
                REFUNDS);
    }

    /** The live heap after {@code slice} (null: before any). */
    private String checkpoint(String name, MessageSet slice) {
        ClassHistogram histogram = ClassHistogram.of(micro.pid());
        checkpoints.put(name, histogram);
        if (slice != null) {
            eventsIn.put(name, (long) slice.distinct().size());
        }
        System.out.printf(
                Locale.ROOT,
                "  %-16s live heap %8.3f MiB   events applied %,7d%n",
                name,
                histogram.bytes() / 1048576.0,
                eventsIn.values().stream().mapToLong(Long::longValue).sum());
        return name;
    }

    private boolean report(List<String> fastPoints, List<String> singlePoints) {
        ClassHistogram start = checkpoints.get("start");
        ClassHistogram end = checkpoints.get(singlePoints.get(singlePoints.size() - 1));
        long heapGrowth = end.bytes() - start.bytes();
        List<ClassHistogram.Growth> growth = start.growthTo(end);
        Set<String> shown = new TreeSet<>();
        growth.stream().limit(12).forEach(g -> shown.add(g.className()));
        Set<String> growing = new TreeSet<>();
        growing.addAll(growingWithEvents(fastPoints));
        growing.addAll(growingWithEvents(singlePoints));
        shown.addAll(growing);

        System.out.printf("%nInstances per checkpoint (the classes that grew most from start to end, and any that grew"
                + " with the events):%n");
        System.out.printf(Locale.ROOT, "  %10s", "");
        checkpoints.keySet().forEach(name -> System.out.printf(Locale.ROOT, " %16s", name));
        System.out.println();
        growth.stream().filter(g -> shown.contains(g.className())).forEach(g -> {
            System.out.printf(Locale.ROOT, "  %+10d", g.instances());
            checkpoints.values().forEach(h -> System.out.printf(Locale.ROOT, " %16d", h.instances(g.className())));
            System.out.printf("  %s%n", g.className());
        });
        System.out.printf(
                Locale.ROOT,
                "%nLive heap from start to end: %+.3f MiB (bound < 1 MiB): %s%n",
                heapGrowth / 1048576.0,
                heapGrowth < HEAP_BOUND_BYTES ? "held" : "GREW");
        System.out.printf(
                "Classes that gained more than %d instances, and more than one per %d events, in every slice of a"
                        + " regime: %s%n",
                NOISE_INSTANCES, EVENTS_PER_INSTANCE, growing.isEmpty() ? "none" : String.join(", ", growing));
        return heapGrowth < HEAP_BOUND_BYTES && growing.isEmpty();
    }

    /** The classes that gained more than the noise in every slice between the checkpoints {@code points}. */
    private Set<String> growingWithEvents(List<String> points) {
        Set<String> growing = new TreeSet<>();
        ClassHistogram first = checkpoints.get(points.get(0));
        ClassHistogram last = checkpoints.get(points.get(points.size() - 1));
        for (ClassHistogram.Growth g : first.growthTo(last)) {
            boolean everySlice = true;
            for (int i = 1; i < points.size() && everySlice; i++) {
                long gained = checkpoints.get(points.get(i)).instances(g.className())
                        - checkpoints.get(points.get(i - 1)).instances(g.className());
                everySlice = gained > Math.max(NOISE_INSTANCES, eventsIn.get(points.get(i)) / EVENTS_PER_INSTANCE);
            }
            if (everySlice) {
                growing.add(g.className());
            }
        }
        return growing;
    }
}
