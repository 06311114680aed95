package org.idempotent.telemetry;

import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.eclipse.microprofile.config.ConfigProvider;
import org.eclipse.microprofile.config.spi.ConfigSource;

/**
 * Tracing is on once an OTLP endpoint is configured, off otherwise: the one {@code otel.*} default the application
 * gives itself (registered in META-INF/services), since it follows from another setting; every other key comes from
 * the server's configuration (post-boot-commands.asadmin). Below every other source, so {@code otel.sdk.disabled} set
 * anywhere else wins ({@code OTEL_SDK_DISABLED=true} keeps tracing off with an endpoint set).
 *
 * <p>Given only when no other source gives it, rather than outranked: Payara (seen on 6.2025.10) collects the
 * {@code otel.*} names of every source into one map and refuses to deploy an application whose name two sources give.
 */
public class TracingDefaults implements ConfigSource {

    static final String TRACES_EXPORTER = "otel.traces.exporter";

    /** Where an exporter is told to send; the environment's OTEL_EXPORTER_OTLP_ENDPOINT among them. */
    static final List<String> ENDPOINTS = List.of("otel.exporter.otlp.endpoint", "otel.exporter.otlp.traces.endpoint");

    private volatile Map<String, String> properties;

    @Override
    public Map<String, String> getProperties() {
        Map<String, String> known = properties;
        if (known == null) {
            known = defaults(ConfigProvider.getConfig().getConfigSources());
            properties = known;
        }
        return known;
    }

    /** The defaults given the other sources: none unless one of them names an endpoint, and none that one sets. */
    Map<String, String> defaults(Iterable<ConfigSource> sources) {
        boolean endpoint = false;
        // Payara 7 builds the SDK with each signal's exporter "none" unless a source names one: spans go over OTLP.
        Map<String, String> defaults = new HashMap<>(Map.of(Tracing.DISABLED, "false", TRACES_EXPORTER, "otlp"));
        for (ConfigSource source : sources) {
            if (source == this || source instanceof TracingDefaults) {
                continue;
            }
            for (String key : ENDPOINTS) {
                String value = source.getValue(key);
                endpoint |= value != null && !value.isBlank();
            }
            defaults.keySet().removeIf(key -> source.getValue(key) != null);
        }
        return endpoint ? Map.copyOf(defaults) : Map.of();
    }

    @Override
    public Set<String> getPropertyNames() {
        return getProperties().keySet();
    }

    @Override
    public String getValue(String name) {
        // Only this application's own keys need the other sources; any other lookup must not build the map (a
        // lookup made while the configuration is still being assembled would find it incomplete).
        return name.startsWith("otel.") ? getProperties().get(name) : null;
    }

    @Override
    public String getName() {
        return "payment-consumer tracing defaults";
    }

    @Override
    public int getOrdinal() {
        return 50;
    }
}
