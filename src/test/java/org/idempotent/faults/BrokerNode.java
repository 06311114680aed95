package org.idempotent.faults;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import javax.management.JMException;
import org.idempotent.stack.BrokerProcess;
import org.idempotent.stack.FreePort;
import org.idempotent.stack.Settings;

/**
 * One broker of a primary/backup pair or of a cluster, made by create-instance.sh with {@code instanceSettings}
 * (BROKER_HA_ROLE, BROKER_CLUSTER_PEERS ...), on ports of its own that it keeps across restarts.
 */
final class BrokerNode {

    /**
     * The redelivery delay capped at 1 s (the product's cap is 5 minutes), as in the fault suite: a message a failover
     * or a kill handed back several times comes back within a second instead of after a back-off that proves nothing
     * more and held a scenario up to half a minute. The breaker holds deliveries while the database is away, so the
     * 20 attempts are not spent the faster for it.
     */
    private static final List<String> REDELIVERY_DELAY_CAP = List.of("addressSettings.\"#\".maxRedeliveryDelay=1000");

    private final String name;
    private final Settings settings;
    private final Map<String, String> instanceSettings;
    private final List<String> brokerProperties;
    private final int jmxPort = FreePort.find();
    private BrokerProcess process;
    private int faults;
    private int cleanStops;

    BrokerNode(String name, Settings settings, Map<String, String> instanceSettings) {
        this(name, settings, instanceSettings, List.of());
    }

    /** With lines for its etc/broker.properties, after create-instance.sh's. */
    BrokerNode(String name, Settings settings, Map<String, String> instanceSettings, List<String> brokerProperties) {
        this.name = name;
        this.settings = settings;
        this.instanceSettings = instanceSettings;
        this.brokerProperties = new ArrayList<>(REDELIVERY_DELAY_CAP);
        this.brokerProperties.addAll(brokerProperties);
    }

    @Override
    public String toString() {
        return name;
    }

    int port() {
        return settings.getInt("BROKER_PORT");
    }

    /** A client's settings for this broker alone (both connectors name it). */
    Settings clientSettings() {
        return settings.with("BROKER_BACKUP_HOST", settings.get("BROKER_HOST"))
                .with("BROKER_BACKUP_PORT", settings.get("BROKER_PORT"));
    }

    /** Where Prometheus scrapes it (the broker's PrometheusEndpoint), as host:port. */
    String metricsTarget() {
        return "127.0.0.1:" + settings.get("BROKER_METRICS_PORT");
    }

    /** Returns once it is live, or waiting as the live one's backup. */
    void start() {
        process = BrokerProcess.startMember(name, settings, instanceSettings, jmxPort, brokerProperties);
    }

    /** kill -9: no clean close of anything; a pair's file lock is released by the kernel. */
    void kill() {
        faults++;
        process.kill();
    }

    /** SIGSTOP: a hung host. It loses nothing, and keeps its sockets and a pair's file lock. */
    void freeze() {
        process.freeze();
    }

    void thaw() {
        process.thaw();
    }

    void stop() {
        if (process != null) {
            faults++;
            cleanStops++;
            process.stop(Duration.ofSeconds(30));
        }
    }

    /** Kills and stops so far. */
    int faults() {
        return faults;
    }

    /** Clean stops so far: on a cluster with scale-down, each moved the node's messages to a peer. */
    int cleanStops() {
        return cleanStops;
    }

    boolean running() {
        return process != null && !process.await(Duration.ZERO);
    }

    BrokerProcess process() {
        return process;
    }

    /** How often it has announced itself as a live broker's backup, over every start. */
    long backupAnnouncements() {
        try {
            return process == null
                    ? 0
                    : Files.readString(process.log())
                            .lines()
                            .filter(line -> line.contains("AMQ221031"))
                            .count();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** Messages of the queue this broker handed to consumers, not acknowledged yet; fails unless it is live. */
    long deliveringCount(String queue) throws IOException, JMException {
        return process.deliveringCount(queue);
    }

    /** The queue's count on this broker; fails unless it is live (a waiting backup has no queues). */
    long messageCount(String queue) throws IOException, JMException {
        return process.messageCount(queue);
    }
}
