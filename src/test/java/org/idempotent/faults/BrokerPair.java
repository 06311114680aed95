package org.idempotent.faults;

import static org.awaitility.Awaitility.await;

import java.io.IOException;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import javax.management.JMException;
import org.idempotent.stack.Settings;

/**
 * Two Artemis brokers made by the product's create-instance.sh as a shared-store primary/backup pair: one journal
 * directory under the stack directory, whose file lock decides which of the two is live.
 */
final class BrokerPair implements AutoCloseable {

    static final String CLUSTER_PASSWORD = "payments-cluster";

    /** A question for the live broker; it fails on a broker that is not. */
    @FunctionalInterface
    private interface Query {
        long ask(BrokerNode member) throws IOException, JMException;
    }

    private final BrokerNode primary;
    private final BrokerNode backup;
    private final Settings clientSettings;

    BrokerPair(Settings base) {
        Settings primarySettings = base.withFreeBrokerPorts();
        Settings backupSettings = base.withFreeBrokerPorts();
        String store = base.stackDir().resolve("broker-store").toString();
        primary = new BrokerNode("broker-primary", primarySettings, pairSettings("primary", store, backupSettings));
        backup = new BrokerNode("broker-backup", backupSettings, pairSettings("backup", store, primarySettings));
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
        return primary.faults() + backup.faults();
    }

    BrokerNode primary() {
        return primary;
    }

    BrokerNode backup() {
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
        return askLive(queue, member -> member.process().consumerCount(queue));
    }

    private long askLive(String queue, Query query) {
        IllegalStateException none = new IllegalStateException("no live broker has queue " + queue);
        for (BrokerNode member : List.of(primary, backup)) {
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
