package org.idempotent.bench;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.function.ToDoubleFunction;
import java.util.stream.DoubleStream;

/**
 * The results of one run, side by side: a line per pass as it ends, then the table, the ratios for the warm
 * and the cold passes, the targets, memory and latency; a CSV and a PNG chart in target/bench.
 */
final class Report {

    private final List<Result> results = new ArrayList<>();
    /** The --compare variants' names, in order. */
    private final List<String> compared = new ArrayList<>();
    /** The Camel peer's variants ({@link CamelPeer}), in order. */
    private final List<String> peers = new ArrayList<>();

    /** The product's paced passes first, then those of the compared variants that had them. */
    private final List<PacedLatency.Measured> latencies = new ArrayList<>();

    private double peakHeapMib;
    private double peakRssMib;
    private String jvmOptions = "defaults";
    /** The compared variant issue 28's CPU targets are measured against (--baseline), or null. */
    private String baseline;

    void add(Result result) {
        results.add(result);
    }

    void addAll(List<Result> passes) {
        results.addAll(passes);
    }

    void baseline(String variant) {
        baseline = variant;
    }

    void compared(String label) {
        compared.add(label);
    }

    void peer(String label) {
        peers.add(label);
    }

    void latency(PacedLatency.Measured measured) {
        latencies.add(measured);
    }

    void memory(double heapMib, double rssMib, String options) {
        peakHeapMib = heapMib;
        peakRssMib = rssMib;
        jvmOptions = options;
    }

    /** One pass, as it ends. */
    static Result print(Result r) {
        System.out.printf(
                Locale.ROOT,
                "  %-38s %3d  %6d msgs %7.2f s %8.0f msg/s  %s%s%n",
                r.variant(),
                r.concurrency(),
                r.messages(),
                r.seconds(),
                r.rate(),
                r.check(),
                r.fromJvmStart() == 0
                        ? ""
                        : String.format(Locale.ROOT, "; JVM start to last acknowledgement %.1f s", r.fromJvmStart()));
        return r;
    }

    /** The variant at its best concurrency: the highest of its medians. */
    Result best(String variant) {
        return results.stream()
                .filter(r -> r.variant().equals(variant))
                .map(r -> resultAt(variant, r.concurrency()))
                .max((a, b) -> Double.compare(a.rate(), b.rate()))
                .orElseThrow();
    }

    void write(Path out) throws IOException {
        Files.createDirectories(out);
        printPeers();
        printWithoutStatistics();
        printRelayPasses();
        StringBuilder csv = new StringBuilder(
                "variant,concurrency,messages,seconds,messages_per_second,check,seconds_from_jvm_start\n");
        System.out.printf("%n%-40s %5s %12s%n", "variant", "N", "messages/s");
        for (Result r : results) {
            System.out.printf(Locale.ROOT, "%-40s %5d %12.0f%n", r.variant(), r.concurrency(), r.rate());
            // Quoted: variant names and checks contain commas.
            csv.append(String.format(
                    Locale.ROOT,
                    "\"%s\",%d,%d,%.3f,%.1f,\"%s\",%.1f%n",
                    r.variant(),
                    r.concurrency(),
                    r.messages(),
                    r.seconds(),
                    r.rate(),
                    r.check(),
                    r.fromJvmStart()));
        }
        Files.writeString(out.resolve("throughput.csv"), csv);
        printRatios("warm: the second pass, what a running consumer does", "");
        printRatios("cold start: the first pass, JIT compilation included", Result.COLD);
        printTargets();
        OutboxWrites.printMedians(results);
        DuplicateCost.print(results);
        if (peakRssMib > 0) {
            System.out.printf(
                    Locale.ROOT,
                    "%nPayara memory over all container runs: peak heap %.0f MiB, peak RSS %.0f MiB (JVM options: %s)%n",
                    peakHeapMib,
                    peakRssMib,
                    jvmOptions);
        }
        if (!latencies.isEmpty()) {
            System.out.println("\nLatency, the paced passes:");
            latencies.forEach(measured -> measured.lines().forEach(line -> System.out.println("  " + line)));
        }
        Chart.write(results, out.resolve("throughput.png"));
        System.out.println("\nWrote " + out.resolve("throughput.csv") + " and " + out.resolve("throughput.png"));
    }

    /**
     * First in the summary: the product against each variant of the Camel peer at the product's best concurrency, cold
     * and warm, medians over the rounds (each variant's median pass by rate; CPU per message the median of its passes).
     */
    private void printPeers() {
        if (peers.isEmpty() || !has("product")) {
            return;
        }
        int n = best("product").concurrency();
        long rounds = results.stream()
                .filter(r -> r.variant().equals("product") && r.concurrency() == n)
                .count();
        System.out.printf(
                Locale.ROOT,
                "%nPeer comparison: the product against an Apache Camel 4 route doing its work (N=%d, medians of %d"
                        + " rounds; CPU per message: the consumer's JVM + broker + PostgreSQL, ms)%n",
                n,
                rounds);
        System.out.printf(
                Locale.ROOT,
                "  %-28s %12s %12s %12s %12s%n",
                "",
                "msg/s cold",
                "CPU/msg cold",
                "msg/s warm",
                "CPU/msg warm");
        List<String> rows = new ArrayList<>(List.of("product"));
        rows.addAll(peers);
        for (String variant : rows) {
            if (!has(variant)) {
                continue;
            }
            System.out.printf(
                    Locale.ROOT,
                    "  %-28s %12.0f %12.2f %12.0f %12.2f%n",
                    variant,
                    rateAt(variant + Result.COLD, n),
                    cpuAt(variant + Result.COLD, n),
                    rateAt(variant, n),
                    cpuAt(variant, n));
        }
        System.out.println("  product / peer (msg/s above 1: the product is faster; CPU per message below 1: it spends"
                + " less)");
        for (String peer : peers) {
            if (!has(peer)) {
                continue;
            }
            System.out.printf(
                    Locale.ROOT,
                    "  %-28s msg/s %5.2f cold, %5.2f warm; CPU per message %5.2f cold, %5.2f warm%n",
                    "/ " + peer,
                    rateAt("product" + Result.COLD, n) / rateAt(peer + Result.COLD, n),
                    rateAt("product", n) / rateAt(peer, n),
                    cpuAt("product" + Result.COLD, n) / cpuAt(peer + Result.COLD, n),
                    cpuAt("product", n) / cpuAt(peer, n));
        }
    }

    /**
     * The product on tables without statistics against its runs with fresh statistics (autovacuum visiting every
     * second) and its own runs (the cluster's defaults), medians, cold and warm, with autovacuum's analyses in each
     * pass: the runs' statistics are what those counts say, not what their names promise.
     */
    private void printWithoutStatistics() {
        String none = ThroughputBenchmark.NO_STATS;
        if (!has(none) || !has("product")) {
            return;
        }
        int n = best("product").concurrency(); // every variant of the rounds runs at it
        System.out.printf("%nTables without statistics (autovacuum off, a fresh database):%n");
        List<String> against = new ArrayList<>();
        if (has(ThroughputBenchmark.FRESH_STATS)) {
            against.add(ThroughputBenchmark.FRESH_STATS);
        }
        against.add("product");
        for (String other : against) {
            for (String pass : List.of(Result.COLD, "")) {
                System.out.printf(
                        Locale.ROOT,
                        "  %-50s CPU per message %5.2f (%.2f / %.2f ms), msg/s %.2f%n",
                        "/ " + other + (pass.isEmpty() ? ", warm" : pass),
                        cpuAt(none + pass, n) / cpuAt(other + pass, n),
                        cpuAt(none + pass, n),
                        cpuAt(other + pass, n),
                        rateAt(none + pass, n) / rateAt(other + pass, n));
            }
        }
        // A new table is analysed at 50 rows and 10 % more changed, but only when autovacuum's launcher visits its
        // database (each autovacuum_naptime), which a pass on a database made a minute before may end before.
        System.out.println("  autovacuum's analyses in each pass (cold; warm):");
        List<String> all = new ArrayList<>(List.of(none));
        all.addAll(against);
        for (String variant : all) {
            System.out.printf(
                    "    %-48s %s; %s%n", variant, analysesOf(variant + Result.COLD, n), analysesOf(variant, n));
        }
    }

    private List<Long> analysesOf(String variant, int n) {
        return results.stream()
                .filter(r -> r.variant().equals(variant) && r.concurrency() == n)
                .map(Result::analyses)
                .toList();
    }

    /** The relay's passes (--relay-passes), medians over each variant's passes that counted them. */
    private void printRelayPasses() {
        List<String> counted = results.stream()
                .filter(r -> r.relay() != null && r.relay().passes() > 0)
                .map(Result::variant)
                .distinct()
                .toList();
        if (counted.isEmpty()) {
            return;
        }
        System.out.printf("%nRelay passes (medians): per message; per pass, the relay's statements' execution time"
                + " (pg_stat_statements) and PostgreSQL's CPU in the pass / passes, ms%n");
        for (String variant : counted) {
            List<RelayPasses.Passes> passes = results.stream()
                    .filter(r -> r.variant().equals(variant)
                            && r.relay() != null
                            && r.relay().passes() > 0)
                    .map(Result::relay)
                    .toList();
            System.out.printf(
                    Locale.ROOT,
                    "  %-40s %8.4f per message %8.3f ms statements %8.2f ms PostgreSQL CPU (%d measured passes)%n",
                    variant,
                    median(passes.stream().mapToDouble(RelayPasses.Passes::perMessage)),
                    median(passes.stream().mapToDouble(RelayPasses.Passes::statementMillisPerPass)),
                    median(passes.stream().mapToDouble(RelayPasses.Passes::postgresCpuMillisPerPass)),
                    passes.size());
        }
    }

    /** Cold start against warm, in the same run: the figures an operator meets after a deploy or a restart. */
    private void printTargets() {
        if (!has("product" + Result.COLD)) {
            return;
        }
        System.out.printf(
                "%nCold start (a fresh Payara JVM; each pass's warm figure is the same instance's second pass)%n");
        for (String variant : List.of("product", ThroughputBenchmark.FRESH_BROKER)) {
            if (!has(variant)) {
                continue;
            }
            Result warm = best(variant);
            Result cold = resultAt(variant + Result.COLD, warm.concurrency());
            target(variant + ", cold / warm, N=" + warm.concurrency(), cold.rate() / warm.rate(), ">=", 0.75);
            target(variant + ", cold msg/s, N=" + warm.concurrency(), cold.rate(), ">=", 1500);
            System.out.printf(
                    Locale.ROOT, "  %-44s %7.1f s%n", variant + ", JVM start to last ack", cold.fromJvmStart());
            target(
                    variant + ", JVM start to readiness, s",
                    medianAt(variant + Result.COLD, warm.concurrency(), Result::toReady),
                    "<=",
                    10);
        }
        for (String variant : compared) {
            if (variant.equals(ThroughputBenchmark.BARE)) {
                printAgainstBare();
                continue;
            }
            Result warm = best(variant);
            String label = variant.substring(ThroughputBenchmark.COMPARED.length());
            target(label + " / default, warm", warm.rate() / rateAt("product", warm.concurrency()), ">=", 1);
            target(
                    label + " / default, cold",
                    rateAt(variant + Result.COLD, warm.concurrency())
                            / rateAt("product" + Result.COLD, warm.concurrency()),
                    ">=",
                    1);
            System.out.printf(
                    Locale.ROOT,
                    "  %-44s %7.1f s (default %.1f s)%n",
                    label + ", JVM start to last ack",
                    resultAt(variant + Result.COLD, warm.concurrency()).fromJvmStart(),
                    resultAt("product" + Result.COLD, warm.concurrency()).fromJvmStart());
            printAgainst(variant, warm.concurrency());
        }
        if (!latencies.isEmpty()) {
            System.out.printf("%nLatency, send to commit at half the warm rate%n");
            PacedLatency.Measured product = latencies.get(0);
            target("p99, ms", product.plain().millisAt(0.99), "<", 20);
            target("p99 during a purge of 1M rows, ms", product.duringPurge().millisAt(0.99), "<", 20);
            for (PacedLatency.Measured other : latencies.subList(1, latencies.size())) {
                System.out.printf(
                        Locale.ROOT,
                        "  %-44s p50 %.1f / p99 %.1f ms (default %.1f / %.1f); during the purge p50 %.1f / p99 %.1f ms"
                                + " (default %.1f / %.1f)%n",
                        other.label(),
                        other.plain().millisAt(0.5),
                        other.plain().millisAt(0.99),
                        product.plain().millisAt(0.5),
                        product.plain().millisAt(0.99),
                        other.duringPurge().millisAt(0.5),
                        other.duringPurge().millisAt(0.99),
                        product.duringPurge().millisAt(0.5),
                        product.duringPurge().millisAt(0.99));
            }
        }
    }

    private static void target(String name, double value, String relation, double bound) {
        boolean met = switch (relation) {
            case "<" -> value < bound;
            case "<=" -> value <= bound;
            default -> value >= bound;
        };
        System.out.printf(
                Locale.ROOT,
                "  %-44s %7.2f   target %s %.2f  %s%n",
                name,
                value,
                relation,
                bound,
                met ? "met" : "MISSED");
    }

    /**
     * The product against the floor of its design on this machine, at the product's best concurrency: CPU per message
     * (the whole machine's, medians) and throughput, warm and cold.
     */
    private void printAgainstBare() {
        String bare = ThroughputBenchmark.BARE;
        int n = best("product").concurrency();
        target("product / bare, CPU per message, warm", cpuAt("product", n) / cpuAt(bare, n), "<=", 1.3);
        target("product / bare, msg/s, warm", rateAt("product", n) / rateAt(bare, n), ">=", 0.8);
        target(
                "product / bare, CPU per message, cold",
                cpuAt("product" + Result.COLD, n) / cpuAt(bare + Result.COLD, n),
                "<=",
                2);
        System.out.printf(
                Locale.ROOT,
                "  %-44s %7.2f / %.2f ms warm, %.2f / %.2f ms cold; %.0f / %.0f msg/s warm%n",
                "CPU per message, product / bare",
                cpuAt("product", n),
                cpuAt(bare, n),
                cpuAt("product" + Result.COLD, n),
                cpuAt(bare + Result.COLD, n),
                rateAt("product", n),
                rateAt(bare, n));
        if (has("product" + Result.STEADY) && has(bare + Result.STEADY)) {
            String steady = Result.STEADY;
            System.out.printf(
                    Locale.ROOT,
                    "  %-44s %7.2f (%.2f / %.2f ms), msg/s %.2f (%.0f / %.0f)%n",
                    "product / bare, third pass: CPU per message",
                    cpuAt("product" + steady, n) / cpuAt(bare + steady, n),
                    cpuAt("product" + steady, n),
                    cpuAt(bare + steady, n),
                    rateAt("product" + steady, n) / rateAt(bare + steady, n),
                    rateAt("product" + steady, n),
                    rateAt(bare + steady, n));
        }
        System.out.printf(
                Locale.ROOT,
                "  %-44s %7.1f s (product %.1f s)%n",
                "bare, JVM start to last ack",
                resultAt(bare + Result.COLD, n).fromJvmStart(),
                resultAt("product" + Result.COLD, n).fromJvmStart());
    }

    /**
     * The product's CPU per message and start against a compared variant's, medians; against the --baseline (the WAR
     * issue 28 measured) with that targets: at most 0.7 of its CPU per message warm, 0.6 cold, and sooner to
     * the last acknowledgement.
     */
    private void printAgainst(String variant, int n) {
        String label = variant.substring(ThroughputBenchmark.COMPARED.length());
        double warm = cpuAt("product", n) / cpuAt(variant, n);
        double cold = cpuAt("product" + Result.COLD, n) / cpuAt(variant + Result.COLD, n);
        // Read as "no path slower than that WAR": the product's own rate over the compared one's, both passes.
        System.out.printf(
                Locale.ROOT,
                "  %-44s %7.2f warm, %.2f cold%n",
                "product / " + label + ", msg/s",
                rateAt("product", n) / rateAt(variant, n),
                rateAt("product" + Result.COLD, n) / rateAt(variant + Result.COLD, n));
        // The same passes as the "JVM start to last ack" line above prints: each variant's median cold pass.
        double toLast = resultAt("product" + Result.COLD, n).fromJvmStart();
        double itsToLast = resultAt(variant + Result.COLD, n).fromJvmStart();
        if (variant.equals(baseline)) {
            target("product / " + label + ", CPU per message, warm", warm, "<=", 0.7);
            target("product / " + label + ", CPU per message, cold", cold, "<=", 0.6);
            target("product, JVM start to last ack, s (" + label + ")", toLast, "<", itsToLast);
        } else {
            System.out.printf(
                    Locale.ROOT, "  %-44s %7.2f warm, %.2f cold%n", "product / " + label + ", CPU per msg", warm, cold);
        }
        System.out.printf(
                Locale.ROOT,
                "  %-44s %7.1f s (product %.1f s)%n",
                label + ", JVM start to readiness",
                medianAt(variant + Result.COLD, n, Result::toReady),
                medianAt("product" + Result.COLD, n, Result::toReady));
    }

    /** The median of the variant's CPU per message over its passes at this concurrency. */
    private double cpuAt(String variant, int concurrency) {
        return medianAt(variant, concurrency, Result::cpuMillis);
    }

    /** The median of one figure of the variant's passes at this concurrency. */
    private double medianAt(String variant, int concurrency, ToDoubleFunction<Result> figure) {
        return median(results.stream()
                .filter(r -> r.variant().equals(variant) && r.concurrency() == concurrency)
                .mapToDouble(figure));
    }

    /** The middle value, the upper of the two middle ones of an even count. */
    static double median(DoubleStream values) {
        double[] sorted = values.sorted().toArray();
        return sorted[sorted.length / 2];
    }

    /** The ratios over the variants named with {@code suffix}, each at its best concurrency. */
    private void printRatios(String title, String suffix) {
        if (!has("product" + suffix)) {
            return;
        }
        Result product = best("product" + suffix);
        Map<String, double[]> ratios = new LinkedHashMap<>();
        if (has(DbCeiling.VARIANT)) {
            Result db = best(DbCeiling.VARIANT);
            ratios.put("product / DB ceiling", new double[] {product.rate() / db.rate(), 0.70});
            if (has(ThroughputBenchmark.CONTAINER_CEILING + suffix)) {
                double container =
                        best(ThroughputBenchmark.CONTAINER_CEILING + suffix).rate();
                ratios.put("container ceiling / DB ceiling", new double[] {container / db.rate(), 0.50});
            }
        }
        against(ratios, ThroughputBenchmark.DEDUP_OFF + suffix, "dedup on / dedup off", suffix, 0.85, true);
        results.stream()
                .map(Result::variant)
                .filter(variant -> variant.startsWith("product, -Xmx")
                        && variant.endsWith(suffix)
                        && (!suffix.isEmpty() || !variant.endsWith(Result.COLD)))
                .distinct()
                .forEach(sized -> against(
                        ratios,
                        sized,
                        sized.substring("product, ".length()).replace(suffix, "") + " / default heap",
                        suffix,
                        0.95,
                        false));
        against(ratios, ThroughputBenchmark.OUTBOX_OFF + suffix, "outbox on / outbox off", suffix, 0.85, true);
        for (String ids : List.of("v4", "v7")) {
            against(
                    ratios,
                    "product, 10M rows, " + ids + " IDs" + suffix,
                    "10M rows, " + ids + " IDs / empty",
                    suffix,
                    0.80,
                    false);
        }
        System.out.printf(
                "%nRatios, %s (each variant at its best concurrency; product N=%d)%n", title, product.concurrency());
        ratios.forEach((name, value) -> System.out.printf(
                Locale.ROOT,
                "  %-32s %5.2f   target >= %.2f  %s%n",
                name,
                value[0],
                value[1],
                value[0] >= value[1] ? "met" : "MISSED"));
    }

    /**
     * The variant (its median pass at the concurrency it ran at) against the product's median there: product / variant
     * with {@code productFirst}, else variant / product. Nothing when the variant did not run.
     */
    private void against(
            Map<String, double[]> ratios,
            String variant,
            String name,
            String suffix,
            double target,
            boolean productFirst) {
        if (!has(variant)) {
            return;
        }
        Result other = best(variant);
        double product = rateAt("product" + suffix, other.concurrency());
        ratios.put(name, new double[] {productFirst ? product / other.rate() : other.rate() / product, target});
    }

    private boolean has(String variant) {
        return results.stream().anyMatch(r -> r.variant().equals(variant));
    }

    private double rateAt(String variant, int concurrency) {
        return resultAt(variant, concurrency).rate();
    }

    /** The median pass of the variant at this concurrency (with --repeat, it ran more than once). */
    private Result resultAt(String variant, int concurrency) {
        List<Result> passes = results.stream()
                .filter(r -> r.variant().equals(variant) && r.concurrency() == concurrency)
                .sorted(Comparator.comparingDouble(Result::rate))
                .toList();
        if (passes.isEmpty()) {
            throw new IllegalStateException("no pass of " + variant + " at " + concurrency);
        }
        return passes.get(passes.size() / 2);
    }
}
