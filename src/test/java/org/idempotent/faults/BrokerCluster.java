package org.idempotent.faults;

import java.io.IOException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import javax.management.JMException;
import org.idempotent.stack.Settings;

/**
 * Live Artemis brokers made by the product's create-instance.sh as one symmetric cluster (BROKER_CLUSTER_PEERS), each
 * with its own journal and no backup: every node takes sends and serves consumers.
 */
final class BrokerCluster implements AutoCloseable {

    private final List<BrokerNode> nodes = new ArrayList<>();
    private final Settings clientSettings;

    /**
     * {@code size} nodes; {@code instanceSettings} go to every node's create-instance.sh as well, {@code brokerProperties}
     * to every node's etc/broker.properties after what the script wrote.
     */
    BrokerCluster(Settings base, int size, Map<String, String> instanceSettings, List<String> brokerProperties) {
        List<Settings> own = new ArrayList<>();
        for (int index = 0; index < size; index++) {
            own.add(base.withFreeBrokerPorts());
        }
        for (int index = 0; index < size; index++) {
            List<String> peers = new ArrayList<>();
            for (int other = 0; other < size; other++) {
                if (other != index) {
                    peers.add("127.0.0.1:" + own.get(other).get("BROKER_PORT"));
                }
            }
            Map<String, String> settings = new HashMap<>(instanceSettings);
            settings.put("BROKER_CLUSTER_PEERS", String.join(",", peers));
            settings.put("BROKER_CLUSTER_PASSWORD", BrokerPair.CLUSTER_PASSWORD);
            nodes.add(new BrokerNode(
                    "broker-node-" + (char) ('a' + index), own.get(index), Map.copyOf(settings), brokerProperties));
        }
        // The consumers' and producers' two connectors: the first two nodes (the topology names any others).
        clientSettings = own.get(0)
                .with("BROKER_BACKUP_HOST", "127.0.0.1")
                .with("BROKER_BACKUP_PORT", own.get(Math.min(1, size - 1)).get("BROKER_PORT"));
    }

    Settings clientSettings() {
        return clientSettings;
    }

    List<BrokerNode> nodes() {
        return nodes;
    }

    BrokerNode node(int index) {
        return nodes.get(index);
    }

    void start() {
        nodes.forEach(BrokerNode::start);
    }

    /** Kills and stops of any node so far. */
    int faults() {
        return nodes.stream().mapToInt(BrokerNode::faults).sum();
    }

    /**
     * The queue's messages on every running node, and every message on its way between two nodes (the store-and-forward
     * queues): a killed node's are not counted until it is back.
     */
    long messageCount(String queue) throws IOException, JMException {
        long count = 0;
        for (BrokerNode node : nodes) {
            if (node.running()) {
                count += node.messageCount(queue) + node.process().storeAndForwardCount();
            }
        }
        return count;
    }

    /** The consumers (one a session) on the queue, over every running node. */
    long consumerCount(String queue) throws IOException, JMException {
        long count = 0;
        for (BrokerNode node : nodes) {
            if (node.running()) {
                count += node.process().consumerCount(queue);
            }
        }
        return count;
    }

    @Override
    public void close() {
        nodes.forEach(BrokerNode::stop);
    }
}
