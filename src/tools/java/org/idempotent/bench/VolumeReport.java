package org.idempotent.bench;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * The volume benchmark's figures side by side, and the ratios the targets are stated in (issue 39's, and issue 49's
 * where it set its own): full table against empty (throughput, p99), during the purge against without it (p99), the
 * minute from the purge's start against the minute before it (p99, and the worst send to commit beside it), and the
 * footprint after a second window against after the first.
 */
final class VolumeReport {

    private final List<String> labels = new ArrayList<>();
    private final List<VolumeTables.Snapshot> snapshots = new ArrayList<>();
    private final List<VolumeLoad.Phase> phases = new ArrayList<>();
    private final List<Double> drained = new ArrayList<>();
    private final List<String> checks = new ArrayList<>();

    /** The tables at a point of the run; autovacuum's runs are counted from one to the next. */
    void tables(String label, VolumeTables.Snapshot snapshot) {
        labels.add(label);
        snapshots.add(snapshot);
    }

    /** A paced phase; {@code drainedRate} the warm backlog's msg/s just before it on the same table, or NaN. */
    void phase(VolumeLoad.Phase phase, double drainedRate) {
        phases.add(phase);
        drained.add(drainedRate);
    }

    /** A phase run during a purge, no backlog drained before it. */
    VolumeLoad.Phase phase(VolumeLoad.Phase phase) {
        phase(phase, Double.NaN);
        return phase;
    }

    void check(String line) {
        checks.add(line);
    }

    VolumeTables.Snapshot snapshot(String label) {
        return snapshots.get(labels.indexOf(label));
    }

    void print(String heading) {
        System.out.printf("%n%s%n", heading);
        System.out.printf(
                Locale.ROOT,
                "  %-34s %12s %12s %12s %9s %9s %9s %9s%n",
                "phase",
                "drained/s",
                "offered/s",
                "consumed/s",
                "p50 ms",
                "p99 ms",
                "p99.9 ms",
                "max ms");
        for (int i = 0; i < phases.size(); i++) {
            VolumeLoad.Phase phase = phases.get(i);
            CommitLatency.Latencies latency = phase.latency();
            boolean any = latency.sorted().length > 0;
            System.out.printf(
                    Locale.ROOT,
                    "  %-34s %12s %12.0f %12.0f %9.1f %9.1f %9.1f %9.1f%n",
                    phase.name(),
                    drained.get(i).isNaN() ? "-" : String.format(Locale.ROOT, "%.0f", drained.get(i)),
                    phase.offered(),
                    phase.consumed(),
                    any ? latency.millisAt(0.50) : Double.NaN,
                    any ? latency.millisAt(0.99) : Double.NaN,
                    any ? latency.millisAt(0.999) : Double.NaN,
                    any ? latency.millisAt(1.0) : Double.NaN);
        }
        for (VolumeLoad.Phase phase : phases) {
            if (phase.purge() != null) {
                System.out.printf(
                        Locale.ROOT,
                        "  purge in %s: %,d rows in %.1f s, %,.0f rows/s, %d run(s)%n",
                        phase.name(),
                        phase.purge().rows(),
                        phase.purge().seconds(),
                        phase.purge().rowsPerSecond(),
                        phase.purge().runs());
            }
        }
        System.out.println("  processed_events (all partitions); autovacuum runs since the line before:");
        for (int i = 0; i < labels.size(); i++) {
            VolumeTables.Snapshot before = snapshots.get(Math.max(0, i - 1));
            System.out.printf(
                    "    %-30s %s%n", labels.get(i), snapshots.get(i).dedup().since(before.dedup()));
        }
        System.out.println("  payment_announcements (all partitions):");
        for (int i = 0; i < labels.size(); i++) {
            VolumeTables.Snapshot before = snapshots.get(Math.max(0, i - 1));
            System.out.printf(
                    "    %-30s %s%n", labels.get(i), snapshots.get(i).outbox().since(before.outbox()));
        }
        checks.forEach(line -> System.out.println("  " + line));
    }

    /** The targets' ratios: phases (a) empty, (b) full, (c) the purge; sizes after the first and second window. */
    void ratios(String afterFirst, String afterSecond) {
        VolumeLoad.Phase empty = phases.get(0);
        VolumeLoad.Phase full = phases.get(1);
        VolumeLoad.Phase purge = phases.get(2);
        System.out.println("  Ratios (the targets in brackets):");
        System.out.printf(
                Locale.ROOT,
                "    throughput full / empty (warm backlog drained): %.2f [>= 0.9]%n",
                drained.get(1) / drained.get(0));
        System.out.printf(
                Locale.ROOT,
                "    p99 send -> commit full / empty: %.2f [<= 1.5]%n",
                full.latency().millisAt(0.99) / empty.latency().millisAt(0.99));
        System.out.printf(
                Locale.ROOT,
                "    p99 send -> commit during the purge / full table without: %.2f [<= 1.5]%n",
                purge.latency().millisAt(0.99) / full.latency().millisAt(0.99));
        for (VolumeLoad.Phase phase : phases) {
            if (phase.around() != null && phase.around().sorted().length > 0) {
                System.out.printf(
                        Locale.ROOT,
                        "    %s: p99 send -> commit from the purge's start (a minute, or to its end) / the minute"
                                + " before: %.1f / %.1f ms = %.2f [<= 1.5 without online discard]; worst %.1f ms"
                                + " (before: %.1f ms)%n",
                        phase.name(),
                        phase.around().millisAt(0.99),
                        phase.before().millisAt(0.99),
                        phase.around().millisAt(0.99) / phase.before().millisAt(0.99),
                        phase.around().millisAt(1.0),
                        phase.before().millisAt(1.0));
            }
        }
        if (labels.contains(afterFirst) && labels.contains(afterSecond)) {
            VolumeTables.Snapshot first = snapshot(afterFirst);
            VolumeTables.Snapshot second = snapshot(afterSecond);
            System.out.printf(
                    Locale.ROOT,
                    "    processed_events table + indexes after the second window / after the first: %.2f [<= 1.1]"
                            + " (outbox: %.2f)%n",
                    second.dedup().totalBytes() / (double) first.dedup().totalBytes(),
                    second.outbox().totalBytes() / (double) first.outbox().totalBytes());
        }
    }
}
