package org.idempotent.bench;

import java.io.IOException;
import java.nio.file.Path;
import java.time.Instant;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import jdk.jfr.consumer.RecordedEvent;
import jdk.jfr.consumer.RecordedFrame;
import jdk.jfr.consumer.RecordingFile;

/**
 * Where the Payara JVM spends its CPU during a run, from a JFR recording's execution samples: the share of samples
 * by component (the package of the innermost frame that belongs to a known component) and the hottest methods.
 */
final class Profile {

    private static final List<String[]> COMPONENTS = List.of(
            new String[] {"org.idempotent.", "product code"},
            new String[] {"org.postgresql.", "PostgreSQL JDBC driver"},
            new String[] {"org.eclipse.persistence.", "EclipseLink"},
            new String[] {"org.apache.activemq.", "Artemis client / RA"},
            new String[] {"io.netty.", "Netty (Artemis transport)"},
            new String[] {"org.eclipse.parsson.", "JSON parsing"},
            new String[] {"com.sun.enterprise.resource.", "connection pools"},
            new String[] {"com.sun.jts.", "JTA transactions"},
            new String[] {"com.sun.ejb.", "EJB container"},
            new String[] {"org.glassfish.", "Payara / GlassFish"},
            new String[] {"fish.payara.", "Payara / GlassFish"},
            new String[] {"com.sun.", "Payara / GlassFish"},
            new String[] {"java.util.logging.", "logging"},
            new String[] {"java.", "JDK"},
            new String[] {"jdk.", "JDK"},
            new String[] {"sun.", "JDK"});

    private Profile() {}

    /**
     * Only the samples taken between {@code from} and {@code to}: the measured window, not the server's start; the
     * allocation is JFR's estimate (the weight of its allocation samples) over the {@code messages} of that window.
     */
    static void summarize(Path recording, Instant from, Instant to, long messages) throws IOException {
        Map<String, Integer> components = new HashMap<>();
        Map<String, Integer> methods = new HashMap<>();
        Map<String, Long> allocated = new HashMap<>();
        int samples = 0;
        for (RecordedEvent event : RecordingFile.readAllEvents(recording)) {
            String type = event.getEventType().getName();
            if (!(type.equals("jdk.ExecutionSample") || type.equals("jdk.ObjectAllocationSample"))
                    || event.getStackTrace() == null
                    || event.getStartTime().isBefore(from)
                    || event.getStartTime().isAfter(to)) {
                continue;
            }
            List<RecordedFrame> frames = event.getStackTrace().getFrames();
            if (frames.isEmpty()) {
                continue;
            }
            if (type.equals("jdk.ObjectAllocationSample")) {
                allocated.merge(component(frames), event.getLong("weight"), Long::sum);
                continue;
            }
            samples++;
            RecordedFrame top = frames.get(0);
            methods.merge(
                    top.getMethod().getType().getName() + "." + top.getMethod().getName(), 1, Integer::sum);
            components.merge(component(frames), 1, Integer::sum);
        }
        int total = samples;
        System.out.printf(
                "%nCPU profile of the Payara JVM while it consumed (%d execution samples, %s)%n", total, recording);
        System.out.println("  by component (innermost frame outside the JDK that belongs to one):");
        components.entrySet().stream()
                .sorted(Map.Entry.<String, Integer>comparingByValue().reversed())
                .forEach(e -> System.out.printf(
                        Locale.ROOT, "    %-28s %5.1f %%%n", e.getKey(), 100.0 * e.getValue() / total));
        System.out.println("  hottest methods (innermost frame):");
        methods.entrySet().stream()
                .sorted(Map.Entry.<String, Integer>comparingByValue().reversed())
                .limit(15)
                .forEach(e ->
                        System.out.printf(Locale.ROOT, "    %5.1f %%  %s%n", 100.0 * e.getValue() / total, e.getKey()));
        System.out.printf(
                Locale.ROOT,
                "  allocated per message, JFR's estimate: %.1f KiB, by component:%n",
                allocated.values().stream().mapToLong(Long::longValue).sum() / 1024.0 / messages);
        allocated.entrySet().stream()
                .sorted(Map.Entry.<String, Long>comparingByValue().reversed())
                .forEach(e -> System.out.printf(
                        Locale.ROOT, "    %-28s %7.1f KiB%n", e.getKey(), e.getValue() / 1024.0 / messages));
    }

    /** The first frame, from the top, that belongs to a component other than the JDK; else the JDK. */
    private static String component(List<RecordedFrame> frames) {
        for (RecordedFrame frame : frames) {
            String type = frame.getMethod().getType().getName();
            for (String[] component : COMPONENTS) {
                if (type.startsWith(component[0]) && !component[1].equals("JDK")) {
                    return component[1];
                }
            }
        }
        return "JDK";
    }
}
