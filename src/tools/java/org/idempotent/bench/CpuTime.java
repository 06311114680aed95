package org.idempotent.bench;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.stream.Stream;

/**
 * CPU time (user + system) consumed so far by a process, or by all PostgreSQL processes, from /proc (Linux): to say
 * which process a run's CPU went to, per message.
 */
final class CpuTime {

    /** Linux reports utime and stime in clock ticks of 10 ms (USER_HZ = 100 on every mainstream kernel). */
    private static final double MILLIS_PER_TICK = 10;

    private CpuTime() {}

    static double ofProcess(long pid) {
        return ticks(Path.of("/proc", String.valueOf(pid), "stat")) * MILLIS_PER_TICK;
    }

    /**
     * Every process whose command is "postgres": the postmaster, its background workers and the backends, and the
     * backends that have ended (a closed connection's CPU moves to the postmaster's children's time).
     */
    static double ofPostgres() {
        double ticks = 0;
        try (Stream<Path> processes = Files.list(Path.of("/proc"))) {
            for (Path process : processes.filter(p -> p.getFileName().toString().matches("\\d+")).toList()) {
                Path stat = process.resolve("stat");
                try {
                    String text = Files.readString(stat);
                    if (text.contains("(postgres)")) {
                        ticks += ticks(text) + childrenTicks(text);
                    }
                } catch (IOException gone) {
                    // the process ended while we looked
                }
            }
        } catch (IOException e) {
            throw new IllegalStateException(e);
        }
        return ticks * MILLIS_PER_TICK;
    }

    private static double ticks(Path stat) {
        try {
            return ticks(Files.readString(stat));
        } catch (IOException e) {
            throw new IllegalStateException(e);
        }
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
