package org.idempotent;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * What keeps the product's source easy to change (src/site/markdown/layout.md): classes that fit in one read, the
 * outbox table known in two places, the retention window read in one.
 */
class SourceShapeTest {

    private static final Path SOURCES = Path.of("src/main/java/org/idempotent");
    private static final int MAX_LINES = 250;
    private static final Pattern WINDOW_READ = Pattern.compile(
            "(getValue|getOptionalValue|ConfigProperty)\\(\\s*(name\\s*=\\s*)?(RetentionPolicy\\.)?WINDOW_DAYS\\b"
                    + "|\"RETENTION_DAYS\"");

    @Test
    void noClassIsLongerThan250Lines() throws IOException {
        assertThat(sources().filter(file -> lines(file).size() > MAX_LINES).map(SourceShapeTest::name))
                .isEmpty();
    }

    @Test
    void noLineIsWiderThan120Columns() throws IOException {
        assertThat(sources()
                        .flatMap(file -> lines(file).stream()
                                .filter(line -> line.length() > 120)
                                .map(line -> name(file) + ": " + line.strip())))
                .isEmpty();
    }

    @Test
    void theOutboxTableIsNamedByThePaymentsStatementAndTheOutboxAndItsCursorAlone() throws IOException {
        assertThat(sources()
                        .filter(file -> read(file).contains("payment_announcements"))
                        .map(SourceShapeTest::name))
                .containsExactlyInAnyOrder(
                        "announcement/control/Outbox.java",
                        "announcement/control/OutboxCursor.java",
                        "payment/control/Payments.java",
                        "refund/control/Refunds.java");
    }

    @Test
    void theRetentionWindowIsReadInOnePlaceAndNamedInOne() throws IOException {
        assertThat(sources()
                        .filter(file -> WINDOW_READ.matcher(read(file)).find())
                        .map(SourceShapeTest::name))
                .as("files that read RETENTION_DAYS, or spell it")
                .containsExactlyInAnyOrder(
                        "retention/control/RetentionSettings.java", "retention/entity/RetentionPolicy.java");
    }

    private static Stream<Path> sources() throws IOException {
        try (Stream<Path> files = Files.walk(SOURCES)) {
            return files.filter(f -> f.toString().endsWith(".java")).toList().stream();
        }
    }

    private static String name(Path file) {
        return SOURCES.relativize(file).toString().replace('\\', '/');
    }

    private static String read(Path file) {
        try {
            return Files.readString(file);
        } catch (IOException e) {
            throw new IllegalStateException(e);
        }
    }

    private static List<String> lines(Path file) {
        return read(file).lines().toList();
    }
}
