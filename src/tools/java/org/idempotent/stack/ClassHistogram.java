package org.idempotent.stack;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * A JVM's live objects, per class: what {@code jcmd <pid> GC.class_histogram} prints, which runs a full GC first, so
 * that only what is still referenced is counted. Two of them, taken around a load, tell what the load left behind.
 *
 * @param classes instances and bytes of each class, by its name as the histogram prints it
 */
public record ClassHistogram(Map<String, Count> classes) {

    /** Instances of a class, and their shallow size. */
    public record Count(long instances, long bytes) {}

    /** What a class has more of in a later histogram than in an earlier one (negative: fewer). */
    public record Growth(String className, long instances, long bytes) {}

    // "   1:        123456       7890123  java.lang.String (java.base@17.0.15)"
    private static final Pattern ROW = Pattern.compile("(?m)^\\s*\\d+:\\s+(\\d+)\\s+(\\d+)\\s+(\\S+)");

    /**
     * The objects a JDK 21+ collector writes into dead space to keep the heap walkable (jdk.internal.vm.FillerObject,
     * arrays of FillerElement): no object of the application's, and as many as the last collection left gaps.
     */
    private static final Pattern FILLER = Pattern.compile("\\[*L?jdk\\.internal\\.vm\\.Filler(Object|Element);?");

    public ClassHistogram {
        classes = Map.copyOf(classes);
    }

    /** The live objects of the JVM {@code pid}, after a full GC, by the {@code jcmd} of the JDK it runs on. */
    public static ClassHistogram of(long pid) {
        Path jcmd = ProcessHandle.of(pid)
                .flatMap(process -> process.info().command())
                .map(java -> Path.of(java).resolveSibling("jcmd"))
                .orElseThrow(() -> new IllegalStateException("no running process " + pid));
        try {
            Process process = new ProcessBuilder(jcmd.toString(), String.valueOf(pid), "GC.class_histogram")
                    .redirectErrorStream(true)
                    .start();
            String output = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            if (!process.waitFor(2, TimeUnit.MINUTES) || process.exitValue() != 0) {
                throw new IllegalStateException("jcmd " + pid + " GC.class_histogram failed: " + output);
            }
            return parse(output);
        } catch (IOException e) {
            throw new IllegalStateException("jcmd " + pid + " GC.class_histogram could not run", e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while taking a class histogram", e);
        }
    }

    static ClassHistogram parse(String output) {
        Map<String, Count> classes = new HashMap<>();
        Matcher row = ROW.matcher(output);
        while (row.find()) {
            if (FILLER.matcher(row.group(3)).matches()) {
                continue;
            }
            // A class loaded by two loaders has two rows of one name: one class here.
            classes.merge(
                    row.group(3),
                    new Count(Long.parseLong(row.group(1)), Long.parseLong(row.group(2))),
                    (a, b) -> new Count(a.instances() + b.instances(), a.bytes() + b.bytes()));
        }
        if (classes.isEmpty()) {
            throw new IllegalArgumentException(
                    "not a class histogram: " + output.lines().findFirst().orElse(""));
        }
        return new ClassHistogram(classes);
    }

    /** Every live object's shallow size, added up: the live heap. */
    public long bytes() {
        return classes.values().stream().mapToLong(Count::bytes).sum();
    }

    public long instances(String className) {
        Count count = classes.get(className);
        return count == null ? 0 : count.instances();
    }

    /** Per class, what {@code later} has more of than this: the largest growth in instances first. */
    public List<Growth> growthTo(ClassHistogram later) {
        Set<String> names = new HashSet<>(classes.keySet());
        names.addAll(later.classes.keySet());
        List<Growth> growth = new ArrayList<>();
        for (String name : names) {
            Count before = classes.getOrDefault(name, new Count(0, 0));
            Count after = later.classes.getOrDefault(name, new Count(0, 0));
            growth.add(new Growth(name, after.instances() - before.instances(), after.bytes() - before.bytes()));
        }
        growth.sort(Comparator.comparingLong(Growth::instances).reversed().thenComparing(Growth::className));
        return growth;
    }
}
