package org.idempotent.bench;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.Callable;
import org.idempotent.loadgen.MessageSet;

/**
 * What a duplicate costs against a new payment (--duplicate-cost): a variant run twice on the same distinct events,
 * once with no copies and once with a copy of each (twice the messages, half of them duplicates), each run a fresh
 * instance with a cold and a warm pass as every container run. From the warm passes' CPU per message (the consumer's
 * JVM, the broker and PostgreSQL, as everywhere in this benchmark): a new payment costs what a message of the first
 * run cost, a duplicate what the second run cost beyond the first, per copy.
 *
 * <p>The two sets are the same seed's events (accounts, amounts) and the same count of them, not the default set's 20 %
 * of duplicates: there MessageSet draws each copy's event at random, so some events come three times and most once,
 * and its fraction is of all messages. Here every event comes once, or exactly twice (MessageSet.copies), shuffled.
 */
final class DuplicateCost {

    /** Suffixes of the two runs' variant names. */
    static final String NEW_ONLY = ", 0 % duplicates";

    static final String HALF = ", 50 % duplicates";

    /** Whether a variant's name is one of these runs' warm pass: with --steady, they drain their set a third time. */
    static boolean isRun(String variant) {
        return variant.endsWith(NEW_ONLY) || variant.endsWith(HALF);
    }

    private final MessageSet newOnly;
    private final MessageSet doubled;

    /** @param unique the distinct events of each set (the default set's, 16,000 by default) */
    DuplicateCost(String accountPrefix, long seed, int unique, int accounts) {
        this.newOnly = MessageSet.of(accountPrefix, seed, unique, 0, accounts);
        this.doubled = MessageSet.copies(accountPrefix, seed, unique, 2, accounts);
        if (newOnly.distinct().size() != unique
                || doubled.distinct().size() != unique
                || doubled.items().size() != 2 * unique) {
            throw new IllegalStateException(
                    "--duplicate-cost: the two sets do not hold the same " + unique + " events");
        }
    }

    /**
     * The variants to run ("product", "compared: LABEL"): from --duplicate-cost's value, "true" (no value) for the
     * product and every --compare variant, else those it names, "product" and --compare labels; read before anything
     * runs, so that a mistyped label costs nothing. Not dedup off (it applies a duplicate again) nor outbox off.
     */
    static List<String> chosen(String option, Collection<String> variants) {
        List<String> compared = variants.stream()
                .filter(name -> name.startsWith(ThroughputBenchmark.COMPARED))
                .toList();
        if (option.equals("true")) {
            List<String> all = new ArrayList<>(List.of("product"));
            all.addAll(compared);
            return all;
        }
        List<String> chosen = new ArrayList<>();
        for (String label : option.split(",")) {
            String name = label.equals("product") ? label : ThroughputBenchmark.COMPARED + label;
            if (!name.equals("product") && !compared.contains(name)) {
                throw new IllegalArgumentException("--duplicate-cost " + label + ": no such --compare label");
            }
            if (!chosen.contains(name)) {
                chosen.add(name);
            }
        }
        return chosen;
    }

    int unique() {
        return newOnly.distinct().size();
    }

    /**
     * The variant's two runs, as two items of a round: each round runs both, in the order its rotation gives them, so
     * that a slow minute of the machine does not always fall on the same one.
     */
    List<Callable<List<Result>>> runs(ContainerRuns runs, String variant, int sessions, Path war, List<String> jvm) {
        return List.of(
                () -> runs.run(variant + NEW_ONLY, sessions, war, newOnly, 0, jvm, false),
                () -> runs.run(variant + HALF, sessions, war, doubled, 0, jvm, false));
    }

    /**
     * Per variant that ran both, each round's figures and their medians, of the warm passes and, with --steady, of the
     * third: CPU per new payment = CPU(0 %) / unique, CPU per duplicate = (CPU(50 %) - CPU(0 %)) / copies. A round is
     * the n-th such pass of each run.
     */
    static void print(List<Result> results) {
        print(results, "", "warm passes");
        // The 50 % run's warm pass follows a cold pass of twice the messages: the JIT is further on than in the 0 %
        // run's, which the third pass no longer shows.
        print(results, Result.STEADY, "third passes, --steady");
    }

    private static void print(List<Result> results, String pass, String title) {
        Map<String, List<Double>> newOnly = cpu(results, NEW_ONLY + pass);
        Map<String, List<Double>> doubled = cpu(results, HALF + pass);
        if (newOnly.isEmpty()) {
            return;
        }
        System.out.printf(
                "%nWhat a duplicate costs (%s; CPU of the consumer's JVM, the broker and PostgreSQL; the same distinct"
                        + " events alone, then each with one copy)%n",
                title);
        for (Map.Entry<String, List<Double>> variant : newOnly.entrySet()) {
            List<Double> half = doubled.getOrDefault(variant.getKey(), List.of());
            List<double[]> rounds = new ArrayList<>();
            for (int round = 0; round < Math.min(variant.getValue().size(), half.size()); round++) {
                // Per message: the 50 % run drained 2 x unique messages, the 0 % run unique, and there are unique
                // copies, so (2 x unique x c50 - unique x c0) / unique.
                double perNew = variant.getValue().get(round);
                double perDuplicate = 2 * half.get(round) - perNew;
                rounds.add(new double[] {perNew, perDuplicate, perDuplicate / perNew});
                System.out.printf(
                        Locale.ROOT,
                        "  %-36s round %d: %.3f ms per new payment, %.3f ms per duplicate: %.2f x%n",
                        variant.getKey(),
                        round + 1,
                        perNew,
                        perDuplicate,
                        perDuplicate / perNew);
            }
            if (rounds.isEmpty()) {
                continue;
            }
            System.out.printf(
                    Locale.ROOT,
                    "  %-36s %.3f ms per new payment, %.3f ms per duplicate: a duplicate costs %.2f x a new payment"
                            + " (%s)%n",
                    variant.getKey(),
                    Report.median(rounds.stream().mapToDouble(r -> r[0])),
                    Report.median(rounds.stream().mapToDouble(r -> r[1])),
                    Report.median(rounds.stream().mapToDouble(r -> r[2])),
                    rounds.size() == 1 ? "one round" : "each the median of " + rounds.size() + " rounds");
        }
    }

    /** The CPU per message of the passes named with {@code suffix}, by variant, in the order they ran. */
    private static Map<String, List<Double>> cpu(List<Result> results, String suffix) {
        Map<String, List<Double>> cpu = new LinkedHashMap<>();
        for (Result r : results) {
            if (r.variant().endsWith(suffix)) {
                String variant = r.variant().substring(0, r.variant().length() - suffix.length());
                cpu.computeIfAbsent(variant, k -> new ArrayList<>()).add(r.cpuMillis());
            }
        }
        return cpu;
    }
}
