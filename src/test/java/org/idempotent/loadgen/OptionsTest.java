package org.idempotent.loadgen;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.Set;
import org.junit.jupiter.api.Test;

class OptionsTest {

    private static final Set<String> KNOWN = Set.of("count", "skip-big", "only");

    @Test
    void valuesSwitchesAndListsAreReadWithTheirFallbacks() {
        Options options =
                Options.parse(new String[] {"--count", "500", "--skip-big", "--only", "db,latency"}, KNOWN, "u");

        assertThat(options.getInt("count", 1)).isEqualTo(500);
        assertThat(options.has("skip-big")).isTrue();
        assertThat(options.getList("only", "")).containsExactly("db", "latency");
        assertThat(options.getDouble("duplicates", 0.2)).isEqualTo(0.2);
    }

    @Test
    void anUnknownOptionOrAStrayWordFailsWithTheUsage() {
        assertThatThrownBy(() -> Options.parse(new String[] {"--cuont", "5"}, KNOWN, "--count N"))
                .hasMessageContaining("unknown option --cuont")
                .hasMessageContaining("--count N");
        assertThatThrownBy(() -> Options.parse(new String[] {"500"}, KNOWN, "--count N"))
                .hasMessageContaining("unknown option 500");
    }

    @Test
    void aValueThatIsNotANumberNamesItsOption() {
        Options options = Options.parse(new String[] {"--count", "many"}, KNOWN, "--count N");

        assertThatThrownBy(() -> options.getInt("count", 1)).hasMessageContaining("--count many is not a number");
    }
}
