package org.idempotent.broker;

import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import io.prometheus.metrics.exporter.httpserver.HTTPServer;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.Map;
import org.apache.activemq.artemis.core.server.metrics.ActiveMQMetricsPlugin;

/**
 * The broker's own metrics (message count, delivering count, acknowledged, added, killed and consumers per queue; the
 * broker's memory) in the Prometheus text format on {@code http://host:port/metrics}: a metrics plugin of broker.xml.
 * Artemis 2.44's distribution has none built in and the Prometheus plugin it used to point to is not on Maven
 * Central, so this one hands Artemis a Micrometer Prometheus registry and serves it with the Prometheus client's
 * small HTTP server (jars in target/runtime/broker-plugins/, copied into the instance's lib/).
 */
public final class PrometheusEndpoint implements ActiveMQMetricsPlugin {

    private static final long serialVersionUID = 1L;

    private transient PrometheusMeterRegistry registry;
    private transient HTTPServer server;

    @Override
    public ActiveMQMetricsPlugin init(Map<String, String> options) {
        registry = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
        String host = options.getOrDefault("host", "127.0.0.1");
        int port = Integer.parseInt(options.getOrDefault("port", "9404"));
        try {
            server = HTTPServer.builder()
                    .hostname(host)
                    .port(port)
                    .registry(registry.getPrometheusRegistry())
                    .buildAndStart();
        } catch (IOException e) {
            throw new UncheckedIOException("broker metrics cannot listen on " + host + ":" + port, e);
        }
        Runtime.getRuntime().addShutdownHook(new Thread(server::close, "broker-metrics-stop"));
        return this;
    }

    @Override
    public MeterRegistry getRegistry() {
        return registry;
    }
}
