package org.idempotent.faults;

import static org.awaitility.Awaitility.await;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import javax.management.JMException;
import org.idempotent.stack.BrokerProcess;
import org.idempotent.stack.FreePort;
import org.idempotent.stack.Settings;

/**
 * Two Artemis brokers made by the product's create-instance.sh as a shared-store primary/backup pair: one journal
 * directory under the stack directory, whose file lock decides which of the two is live.
 */
final class BrokerPair implements AutoCloseable {

    static final String CLUSTER_PASSWORD = "payments-cluster";

    /**
     * The redelivery delay capped at 1 s (the product's cap is 5 minutes), as in the fault suite: a message a failover
     * or a kill handed back several times comes back within a second instead of after a back-off that proves nothing
     * more and held a scenario up to half a minute. The breaker holds deliveries while the database is away, so the
     * 20 attempts are not spent the faster for it.
     */
    private static final List<String> REDELIVERY_DELAY_CAP = List.of("addressSettings.\"#\".maxRedeliveryDelay=1000");

    /** One broker of the pair, on ports of its own (kept across restarts). */
    static final class Member {
        private final String name;
        private final Settings settings;
        private final Map<String, String> pairSettings;
        private final int jmxPort = FreePort.find();
        private BrokerProcess process;
        private int faults;

        private Member(String name, Settings settings, Map<String, String> pairSettings) {
            this.name = name;
            this.settings = settings;
            this.pairSettings = pairSettings;
        }

        int port() {
            return settings.getInt("BROKER_PORT");
        }

        /** Where Prometheus scrapes it (the broker's PrometheusEndpoint), as host:port. */
        String metricsTarget() {
            return "127.0.0.1:" + settings.get("BROKER_METRICS_PORT");
        }

        /** Returns once it is live, or waiting as the live one's backup. */
        void start() {
            process = BrokerProcess.startPairMember(name, settings, pairSettings, jmxPort, REDELIVERY_DELAY_CAP);
        }

        /** kill -9: the file lock is released by the kernel, the other broker takes over. */
        void kill() {
            faults++;
            process.kill();
        }

        void stop() {
            if (process != null) {
                faults++;
                process.stop(Duration.ofSeconds(30));
            }
        }

        boolean running() {
            return process != null && !process.await(Duration.ZERO);
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

        /** The queue's count on this broker; fails unless it is the live one (a waiting backup has no queues). */
        long messageCount(String queue) throws IOException, JMException {
            return process.messageCount(queue);
        }
    }

    /** A question for the live broker; it fails on a broker that is not. */
    @FunctionalInterface
    private interface Query {
        long ask(Member member) throws IOException, JMException;
    }

    private final Member primary;
    private final Member backup;
    private final Settings clientSettings;

    BrokerPair(Settings base) {
        Settings primarySettings = base.withFreeBrokerPorts();
        Settings backupSettings = base.withFreeBrokerPorts();
        String store = base.stackDir().resolve("broker-store").toString();
        primary = new Member("broker-primary", primarySettings, pairSettings("primary", store, backupSettings));
        backup = new Member("broker-backup", backupSettings, pairSettings("backup", store, primarySettings));
        clientSettings = primarySettings.with("BROKER_BACKUP_PORT", String.valueOf(backup.port()));
    }

    private static Map<String, String> pairSettings(String role, String store, Settings peer) {
        return Map.of(
                "BROKER_HA_ROLE",
                role,
                "BROKER_STORE",
                store,
                "BROKER_PEER_HOST",
                "127.0.0.1",
                "BROKER_PEER_PORT",
                peer.get("BROKER_PORT"),
                "BROKER_CLUSTER_PASSWORD",
                CLUSTER_PASSWORD);
    }

    /** The consumers' and producers' settings: the primary, with the backup as BROKER_BACKUP_*. */
    Settings clientSettings() {
        return clientSettings;
    }

    /** The primary first, so that it is the live one. */
    void start() {
        primary.start();
        backup.start();
    }

    /** Kills and stops of either broker so far: what the broker could have lost in, or nothing if 0. */
    int faults() {
        return primary.faults + backup.faults;
    }

    Member primary() {
        return primary;
    }

    Member backup() {
        return backup;
    }

    /**
     * The primary started again while the backup is live: the backup hands the store back and waits again (failback).
     * Returns once the primary is live and the backup has announced itself again.
     */
    void failBack(String queue) {
        long announced = backup.backupAnnouncements();
        primary.start();
        await().atMost(Duration.ofMinutes(2))
                .ignoreExceptions()
                .until(() -> primary.messageCount(queue) >= 0 && backup.backupAnnouncements() > announced);
    }

    /** The primary stopped cleanly (maintenance): it hands over to the backup before it goes. */
    void switchOver(String queue) {
        primary.stop();
        await().atMost(Duration.ofMinutes(1)).ignoreExceptions().until(() -> backup.messageCount(queue) >= 0);
    }

    /** The count on whichever broker is live. */
    long messageCount(String queue) throws IOException, JMException {
        return askLive(queue, member -> member.messageCount(queue));
    }

    /** The consumers (one a session) attached to the queue on whichever broker is live. */
    long consumerCount(String queue) {
        return askLive(queue, member -> member.process.consumerCount(queue));
    }

    private long askLive(String queue, Query query) {
        IllegalStateException none = new IllegalStateException("no live broker has queue " + queue);
        for (Member member : List.of(primary, backup)) {
            if (member.running()) {
                try {
                    return query.ask(member);
                } catch (IOException | JMException | IllegalStateException notLive) {
                    none.addSuppressed(notLive);
                }
            }
        }
        throw none;
    }

    @Override
    public void close() {
        backup.stop();
        primary.stop();
    }
}
