package org.idempotent.telemetry;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import java.util.Map;
import java.util.Set;
import org.eclipse.microprofile.config.spi.ConfigSource;
import org.junit.jupiter.api.Test;

class TracingDefaultsTest {

    private final TracingDefaults defaults = new TracingDefaults();

    @Test
    void withoutAnEndpointTracingStaysOff() {
        assertThat(defaults.defaults(List.of(source(Map.of("otel.service.name", "payment-consumer")))))
                .isEmpty();
    }

    @Test
    void anEndpointAnywhereTurnsTracingOn() {
        assertThat(defaults.defaults(List.of(
                        source(Map.of("otel.service.name", "payment-consumer")),
                        source(Map.of("otel.exporter.otlp.endpoint", "http://collector:4318")))))
                .containsOnly(Map.entry("otel.sdk.disabled", "false"), Map.entry("otel.traces.exporter", "otlp"));
        assertThat(defaults.defaults(List.of(source(Map.of("otel.exporter.otlp.traces.endpoint", "http://c:4318")))))
                .containsOnly(Map.entry("otel.sdk.disabled", "false"), Map.entry("otel.traces.exporter", "otlp"));
    }

    @Test
    void aBlankEndpointIsNone() {
        assertThat(defaults.defaults(List.of(source(Map.of("otel.exporter.otlp.endpoint", " ")))))
                .isEmpty();
    }

    /** Given twice, Payara would refuse to deploy: the other source's value stands alone. */
    @Test
    void theSwitchSetElsewhereIsLeftToThatSource() {
        assertThat(defaults.defaults(List.of(source(
                        Map.of("otel.exporter.otlp.endpoint", "http://collector:4318", "otel.sdk.disabled", "true")))))
                .containsOnly(Map.entry("otel.traces.exporter", "otlp"));
        assertThat(defaults.defaults(List.of(source(Map.of(
                        "otel.exporter.otlp.endpoint", "http://collector:4318", "otel.traces.exporter", "console")))))
                .containsOnly(Map.entry("otel.sdk.disabled", "false"));
    }

    @Test
    void onlyOtelKeysAreAnswered() {
        assertThat(defaults.getValue("PAYMENTS_QUEUE")).isNull();
    }

    private static ConfigSource source(Map<String, String> properties) {
        return new ConfigSource() {
            @Override
            public Set<String> getPropertyNames() {
                return properties.keySet();
            }

            @Override
            public String getValue(String name) {
                return properties.get(name);
            }

            @Override
            public String getName() {
                return "test";
            }
        };
    }
}
