package org.idempotent;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * The features depend one way (src/site/markdown/layout.md): each may use the root package (what every feature shares: the
 * resources' JNDI names, the REST application and its admin role) and the features below it in {@link #FEATURES},
 * never one above it. A plain scan of the product's imports, fully qualified names included.
 */
class FeatureDependenciesTest {

    /** Bottom first: the schema everything waits for, the monitoring that looks at everything last. */
    static final List<String> FEATURES = List.of(
            "schema",
            "postgres",
            "telemetry",
            "retention",
            "delivery",
            "payment",
            "refund",
            "announcement",
            "operations");

    private static final Path SOURCES = Path.of("src/main/java/org/idempotent");
    private static final Pattern REFERENCE = Pattern.compile("\\borg\\.idempotent\\.([a-z]+)\\.");

    @Test
    void aFeatureUsesOnlyTheRootAndTheFeaturesBelowIt() throws IOException {
        List<String> upwards = new ArrayList<>();
        try (Stream<Path> files = Files.walk(SOURCES)) {
            for (Path file : files.filter(f -> f.toString().endsWith(".java")).toList()) {
                Path relative = SOURCES.relativize(file);
                if (relative.getNameCount() == 1) {
                    assertThat(Files.readString(file))
                            .as(relative + ", in the root package, uses no feature")
                            .doesNotContainPattern("org\\.idempotent\\.[a-z]+\\.");
                    continue;
                }
                String feature = relative.getName(0).toString();
                assertThat(FEATURES)
                        .as("the feature of " + relative + " has its place in FEATURES")
                        .contains(feature);
                Matcher reference = REFERENCE.matcher(Files.readString(file));
                while (reference.find()) {
                    String used = reference.group(1);
                    if (FEATURES.indexOf(used) > FEATURES.indexOf(feature)) {
                        upwards.add(relative + " uses " + used);
                    }
                }
            }
        }
        assertThat(upwards).as("references from a feature to one above it").isEmpty();
    }
}
