package org.idempotent.bench;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.stream.Stream;

/**
 * CPU time (user + system) consumed so far by a process, or by a PostgreSQL cluster, from /proc (Linux): to say
 * which process a run's CPU went to, per message.
 */
final class CpuTime {

    /** Linux reports utime and stime in clock ticks of USER_HZ, read from the system (getconf CLK_TCK). */
    private static final double MILLIS_PER_TICK = 1000.0 / clockTicksPerSecond();

    private CpuTime() {}

    private static long clockTicksPerSecond() {
        try {
            Process getconf = new ProcessBuilder("getconf", "CLK_TCK")
                    .redirectErrorStream(true)
                    .start();
            String answer = new String(getconf.getInputStream().readAllBytes()).strip();
            if (getconf.waitFor() != 0) {
                throw new IllegalStateException("getconf CLK_TCK failed: " + answer);
            }
            return Long.parseLong(answer);
        } catch (IOException e) {
            throw new IllegalStateException("getconf CLK_TCK", e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted", e);
        }
    }

    /** The process's peak resident set size so far (VmHWM), in MiB. */
    static double peakRssMib(long pid) {
        try {
            for (String line : Files.readAllLines(Path.of("/proc", String.valueOf(pid), "status"))) {
                if (line.startsWith("VmHWM:")) {
                    return Long.parseLong(line.replaceAll("\\D", "")) / 1024.0;
                }
            }
            throw new IllegalStateException("no VmHWM for process " + pid);
        } catch (IOException e) {
            throw new IllegalStateException(e);
        }
    }

    static double ofProcess(long pid) {
        return ticks(Path.of("/proc", String.valueOf(pid), "stat")) * MILLIS_PER_TICK;
    }

    /**
     * The benchmark's own PostgreSQL cluster: its postmaster, the postmaster's children (background workers and
     * backends) and the children that have ended (a closed connection's CPU moves to the postmaster's children's
     * time). Nothing of the machine's other clusters.
     */
    static double ofPostgres(long postmaster) {
        String own = read(Path.of("/proc", String.valueOf(postmaster), "stat"));
        return (ticks(own)
                        + childrenTicks(own)
                        + children(postmaster).mapToDouble(CpuTime::ticks).sum())
                * MILLIS_PER_TICK;
    }

    /** The CPU of a JVM's JIT compiler threads (HotSpot names them "C1 CompilerThre..." and "C2 CompilerThre..."). */
    static double ofJitCompilers(long pid) {
        return ofThreads(pid, "C1 CompilerThre", "C2 CompilerThre");
    }

    /** The CPU of a JVM's garbage-collector threads (Parallel GC's "GC Thread#N", G1's "G1 ..." among others). */
    static double ofGarbageCollector(long pid) {
        return ofThreads(pid, "GC Thread", "G1 ", "VM Thread");
    }

    /** The threads of {@code pid} whose name starts with one of {@code names}: live threads only. */
    private static double ofThreads(long pid, String... names) {
        double ticks = 0;
        try (Stream<Path> tasks = Files.list(Path.of("/proc", String.valueOf(pid), "task"))) {
            for (Path task : tasks.toList()) {
                try {
                    String stat = Files.readString(task.resolve("stat"));
                    String name = stat.substring(stat.indexOf('(') + 1, stat.lastIndexOf(')'));
                    for (String prefix : names) {
                        if (name.startsWith(prefix)) {
                            ticks += ticks(stat);
                            break;
                        }
                    }
                } catch (IOException gone) {
                    // a compiler thread that has ended (HotSpot adds and removes them as the queue grows and shrinks)
                }
            }
        } catch (IOException e) {
            throw new IllegalStateException(e);
        }
        return ticks * MILLIS_PER_TICK;
    }

    /** How many processes the postmaster has: its workers, and a backend for each open connection. */
    static long childrenOf(long postmaster) {
        return children(postmaster).count();
    }

    /** The /proc/PID/stat text of each child of {@code parent}. */
    private static Stream<String> children(long parent) {
        try (Stream<Path> processes = Files.list(Path.of("/proc"))) {
            return processes
                    .filter(p -> p.getFileName().toString().matches("\\d+"))
                    .map(process -> {
                        try {
                            return Files.readString(process.resolve("stat"));
                        } catch (IOException gone) {
                            return null; // the process ended while we looked
                        }
                    })
                    .filter(stat -> stat != null && (long) field(stat, 1) == parent)
                    .toList()
                    .stream();
        } catch (IOException e) {
            throw new IllegalStateException(e);
        }
    }

    private static String read(Path stat) {
        try {
            return Files.readString(stat);
        } catch (IOException e) {
            throw new IllegalStateException(e);
        }
    }

    private static double ticks(Path stat) {
        return ticks(read(stat));
    }

    /** Fields 14 and 15 (utime, stime), counted after the command name, which may contain spaces. */
    private static double ticks(String stat) {
        return field(stat, 11) + field(stat, 12);
    }

    /** Fields 16 and 17 (cutime, cstime): the ended children that the process has waited for. */
    private static double childrenTicks(String stat) {
        return field(stat, 13) + field(stat, 14);
    }

    private static double field(String stat, int afterName) {
        return Double.parseDouble(stat.substring(stat.lastIndexOf(')') + 2).split(" ")[afterName]);
    }
}
