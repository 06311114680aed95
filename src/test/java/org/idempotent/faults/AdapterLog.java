package org.idempotent.faults;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.time.format.DateTimeFormatter;
import java.time.format.DateTimeParseException;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.idempotent.faults.FaultStack.Instance;

/**
 * What the consumers' resource adapter and JMS client logged since a fault (Artemis codes AMQ15xxxx and AMQ21xxxx),
 * for the message of a failed resume assertion: a run's logs are gone once CI has reported, its assertion messages are
 * not.
 */
final class AdapterLog {

    /** The last lines of each instance: enough to tell a session that failed over from one set up again. */
    private static final int LAST = 6;

    private static final int WIDTH = 240;
    private static final Pattern CODE = Pattern.compile("AMQ(15|21)\\d{4}");
    private static final Pattern TIME = Pattern.compile("^\\[(\\d{4}-\\d{2}-\\d{2}T[\\d:.]+[+-]\\d{4})\\]");
    private static final Pattern COLOUR = Pattern.compile("\u001B\\[[0-9;]*m");
    private static final DateTimeFormatter LOGGED = DateTimeFormatter.ofPattern("yyyy-MM-dd'T'HH:mm:ss.SSSZ");
    /** A record's first line: time, level, logger, thread ... then the message after its level value. */
    private static final Pattern RECORD = Pattern.compile(
            "^\\[([^]]+)\\] \\[[^]]*\\] \\[([A-Z]+)\\] \\[[^]]*\\] \\[([^]]*)\\].*?\\[levelValue: \\d+\\] (.*)$");

    private AdapterLog() {}

    /** Each instance's name, how many such lines it logged since {@code since}, and the last of them. */
    static String since(List<Instance> instances, Instant since) {
        StringBuilder said = new StringBuilder();
        for (Instance instance : instances) {
            List<String> lines = lines(instance, since);
            said.append(String.format("%n%s: %d adapter and client lines since the fault", instance, lines.size()));
            lines.subList(Math.max(0, lines.size() - LAST), lines.size())
                    .forEach(line ->
                            said.append(System.lineSeparator()).append("  ").append(line));
        }
        return said.toString();
    }

    /** How many lines with one of these codes the instance logged since {@code since}. */
    static long count(Instance instance, Instant since, List<String> codes) {
        return lines(instance, since).stream()
                .filter(line -> codes.stream().anyMatch(line::contains))
                .count();
    }

    /**
     * A message's code is often on a line of its own below the record's time stamp (Payara's multi-line records), so
     * a line counts from the time of the record it belongs to.
     */
    private static List<String> lines(Instance instance, Instant since) {
        List<String> lines = new ArrayList<>();
        Instant recordTime = Instant.MIN;
        try {
            for (String raw : Files.readAllLines(instance.process().log(), StandardCharsets.ISO_8859_1)) {
                String line = COLOUR.matcher(raw).replaceAll("").strip();
                Matcher time = TIME.matcher(line);
                if (time.find()) {
                    recordTime = parse(time.group(1), recordTime);
                }
                if (!recordTime.isBefore(since) && CODE.matcher(line).find()) {
                    String shown = compact(line);
                    lines.add(shown.length() > WIDTH ? shown.substring(0, WIDTH) + " ..." : shown);
                }
            }
        } catch (IOException | UncheckedIOException e) {
            lines.add("(its log could not be read: " + e + ")");
        }
        return lines;
    }

    /** Time, level, the logger's simple name and the message: what the width allows of a record's first line. */
    private static String compact(String line) {
        Matcher record = RECORD.matcher(line);
        if (!record.matches()) {
            return line;
        }
        String logger = record.group(3);
        return String.join(
                " ", record.group(1), record.group(2), logger.substring(logger.lastIndexOf('.') + 1), record.group(4));
    }

    private static Instant parse(String text, Instant otherwise) {
        try {
            return OffsetDateTime.parse(text, LOGGED).toInstant();
        } catch (DateTimeParseException e) {
            return otherwise;
        }
    }
}
