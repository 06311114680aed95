package org.idempotent;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * The delivery machinery (src/main/java/org/idempotent/delivery) is the part any event type reuses: it uses no
 * business package and names no business type, so that a new kind of event is its own package (layout.md) and never
 * a change in here.
 */
class DeliverySeamTest {

    private static final Path DELIVERY = Path.of("src/main/java/org/idempotent/delivery");
    private static final Pattern BUSINESS_PACKAGE = Pattern.compile("\\borg\\.idempotent\\.(payment|refund)\\b");
    /** A type of the business: PaymentEvent, RefundEvent, Payments, Refunds ... anywhere in the code. */
    private static final Pattern BUSINESS_TYPE = Pattern.compile("\\b(Payment|Refund)s?[A-Z]?\\w*\\b");

    @Test
    void theDeliveryPackageUsesNoBusinessPackage() {
        assertThat(sources().filter(file -> find(BUSINESS_PACKAGE, code(file)) != null))
                .as("delivery files that use org.idempotent.payment or .refund")
                .isEmpty();
    }

    @Test
    void theDeliveryPackageNamesNoBusinessType() {
        assertThat(sources()
                        .map(file -> {
                            String found = find(BUSINESS_TYPE, code(file));
                            return found == null ? null : DELIVERY.relativize(file) + " names " + found;
                        })
                        .filter(found -> found != null))
                .as("delivery files that name a business type in their code (comments aside)")
                .isEmpty();
    }

    @Test
    void theDeliveryPackageHasTheMachinery() {
        assertThat(sources().map(file -> file.getFileName().toString()))
                .as("a scan that finds nothing proves nothing")
                .contains("Delivery.java", "EventProcessor.java", "EventType.java", "ProcessedEvent.java");
    }

    private static Stream<Path> sources() {
        try (Stream<Path> files = Files.walk(DELIVERY)) {
            List<Path> java = files.filter(f -> f.toString().endsWith(".java")).toList();
            return java.stream();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** The file without its comments and string literals: what the compiler sees as names. */
    private static String code(Path file) {
        try {
            return Files.readString(file)
                    .replaceAll("(?s)/\\*.*?\\*/", "")
                    .replaceAll("//[^\\n]*", "")
                    .replaceAll("\"(?:[^\"\\\\\\n]|\\\\.)*\"", "\"\"");
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private static String find(Pattern pattern, String text) {
        Matcher matcher = pattern.matcher(text);
        return matcher.find() ? matcher.group() : null;
    }
}
