package org.idempotent.faults;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.function.Function;
import java.util.stream.Collectors;
import javax.management.JMException;
import org.idempotent.stack.BrokerProcess;
import org.idempotent.stack.Build;
import org.idempotent.stack.Database;
import org.idempotent.stack.FreePort;
import org.idempotent.stack.InstanceMetrics;
import org.idempotent.stack.PayaraMicroProcess;
import org.idempotent.stack.Settings;

/**
 * The processes of one scenario: a fresh database, a fresh broker with a persistent journal on a port of its own,
 * and Payara Micro instances with the product WAR. Closing it stops everything it started, also after a failure.
 */
final class FaultStack implements AutoCloseable {

    private static final Duration START_TIMEOUT = Duration.ofMinutes(3);
    private static final String DUPLICATES = "duplicates";
    private static final String REDELIVERIES = "redeliveries";
    private static final String APPLIED = "applied";

    private final Settings settings;
    private final List<Instance> instances = new ArrayList<>();
    private final int brokerJmxPort = FreePort.find();
    private String[] brokerOptions;
    private BrokerProcess broker;
    private int brokerFaults;
    private int brokerFaultsChecked;
    private int startsChecked;
    private final Map<BrokerNode, Integer> cleanStopsChecked = new HashMap<>();
    private long duplicatesChecked;
    private BrokerPair brokerPair;
    private BrokerCluster brokerCluster;

    /** A Payara Micro instance by name, on its own HTTP port, which it keeps across restarts. */
    static final class Instance {
        private final String name;
        private final Settings settings;
        private PayaraMicroProcess process;
        private int starts;
        /** Counters of earlier incarnations, read just before each kill. */
        private final Map<String, Long> carried = new HashMap<>();

        private Instance(String name, Settings settings) {
            this.name = name;
            this.settings = settings;
        }

        int starts() {
            return starts;
        }

        @Override
        public String toString() {
            return name;
        }

        PayaraMicroProcess process() {
            return process;
        }

        InstanceMetrics metrics() {
            return new InstanceMetrics(process);
        }

        void start() {
            process = PayaraMicroProcess.startReady(name, settings, Build.WAR);
            starts++;
        }

        /**
         * kill -9 and start again: no shutdown hook, no clean close of any connection. The counters are read just
         * before the kill, so what the dead JVM counted in the last milliseconds is missing from {@link #total}.
         */
        void crashAndRestart() {
            crash();
            start();
        }

        /** Starts it and returns at once: for a scenario in which it is not to be ready. */
        void startUnready() {
            process = PayaraMicroProcess.start(name, settings, Build.WAR, false);
            starts++;
        }

        /** Once this instance's /health/ready answers UP, or fails after the start's timeout. */
        void awaitReady() {
            process.awaitReady(START_TIMEOUT);
        }

        /** kill -9, the counts read just before. */
        void crash() {
            carryCounts();
            process.kill();
        }

        /** SIGSTOP: a JVM in a long pause, its connections open and silent. */
        void freeze() {
            process.freeze();
        }

        void thaw() {
            process.thaw();
        }

        /** A clean stop, to be started again later; the counts read just before. */
        void stopForNow() {
            carryCounts();
            stop();
        }

        private void carryCounts() {
            InstanceMetrics metrics = metrics();
            long duplicates = metrics.outcome("duplicate");
            long redeliveries = metrics.redeliveries();
            long applied = metrics.outcome(APPLIED);
            carried.merge(APPLIED, applied, Long::sum);
            carried.merge(DUPLICATES, duplicates, Long::sum);
            carried.merge(REDELIVERIES, redeliveries, Long::sum);
        }

        /** Duplicates counted by every incarnation of this instance so far. */
        long duplicates() {
            return carried.getOrDefault(DUPLICATES, 0L) + (running() ? metrics().outcome("duplicate") : 0);
        }

        /** Payments applied by every incarnation of this instance so far. */
        long applied() {
            return carried.getOrDefault(APPLIED, 0L) + (running() ? metrics().outcome(APPLIED) : 0);
        }

        /** Deliveries the broker marked as redelivered, over every incarnation so far. */
        long redeliveries() {
            return carried.getOrDefault(REDELIVERIES, 0L)
                    + (running() ? metrics().redeliveries() : 0);
        }

        boolean running() {
            return process != null && !process.await(Duration.ZERO);
        }

        void stop() {
            if (process != null) {
                process.stop(Duration.ofSeconds(30));
            }
        }
    }

    FaultStack(String scenario, Map<String, String> overrides) {
        this(scenario, overrides, List.of());
    }

    /** With JVM options for the broker, e.g. system properties of broker.xml. */
    FaultStack(String scenario, Map<String, String> overrides, List<String> brokerOptions) {
        this(scenario, overrides, brokerOptions, Brokers.ONE, null, null);
    }

    /** One broker, a primary/backup pair, or a cluster of two live nodes. */
    private enum Brokers {
        ONE,
        PAIR,
        CLUSTER
    }

    /**
     * The production topology's shared parts: a primary/backup broker pair instead of one broker, and a PostgreSQL
     * primary with its standby instead of the machine's cluster (when {@code database} is given).
     */
    static FaultStack highlyAvailable(String scenario, Map<String, String> overrides, PostgresPair database) {
        return new FaultStack(scenario, overrides, List.of(), Brokers.PAIR, database, null);
    }

    /** One broker, and a PostgreSQL primary with its standby instead of the machine's cluster. */
    static FaultStack withDatabasePair(String scenario, Map<String, String> overrides, PostgresPair database) {
        return new FaultStack(scenario, overrides, List.of(), Brokers.ONE, database, null);
    }

    /**
     * Two live brokers in one cluster (create-instance.sh's BROKER_CLUSTER_PEERS) instead of one broker:
     * {@code instanceSettings} for each node's create-instance.sh, {@code brokerProperties} for its broker.properties.
     */
    static FaultStack clustered(
            String scenario,
            Map<String, String> overrides,
            Map<String, String> instanceSettings,
            List<String> brokerProperties) {
        return new FaultStack(
                scenario,
                overrides,
                List.of(),
                Brokers.CLUSTER,
                null,
                base -> new BrokerCluster(base, 2, instanceSettings, brokerProperties));
    }

    private FaultStack(
            String scenario,
            Map<String, String> overrides,
            List<String> brokerOptions,
            Brokers brokers,
            PostgresPair database,
            Function<Settings, BrokerCluster> cluster) {
        this.brokerOptions = brokerOptions.toArray(String[]::new);
        Settings base = Settings.fromEnvironment();
        Settings configured = base.with("DB_NAME", "payments_it_faults")
                .withFreeBrokerPorts()
                .with(
                        "STACK_DIR",
                        base.stackDir().resolve("faults").resolve(scenario).toString());
        if (database != null) {
            configured = database.serversOf(configured);
        }
        for (Map.Entry<String, String> override : overrides.entrySet()) {
            configured = configured.with(override.getKey(), override.getValue());
        }
        if (brokers == Brokers.PAIR) {
            brokerPair = new BrokerPair(configured);
            configured = brokerPair.clientSettings();
        } else if (brokers == Brokers.CLUSTER) {
            brokerCluster = cluster.apply(configured);
            configured = brokerCluster.clientSettings();
        }
        settings = configured;
        try {
            Database.recreate(settings);
            Files.createDirectories(settings.stackDir());
            PayaraMicroProcess.adminPasswordFile(settings.stackDir(), settings);
        } catch (SQLException e) {
            throw new IllegalStateException("PostgreSQL not reachable at " + settings.jdbcUrl(), e);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        startBroker();
    }

    Settings settings() {
        return settings;
    }

    Instance startInstance(String name) {
        return startInstances(List.of(name)).get(0);
    }

    /** One more instance, started without waiting for it to be ready (see {@link Instance#awaitReady}). */
    Instance startInstanceUnready(String name) {
        Instance instance = new Instance(name, settings.with("HTTP_PORT", String.valueOf(FreePort.find())));
        instances.add(instance);
        instance.startUnready();
        return instance;
    }

    /** Several at once: a JVM's start waits on its disk and its sockets part of the time, which another can use. */
    List<Instance> startInstances(List<String> names) {
        List<Instance> started = new ArrayList<>();
        for (String name : names) {
            Instance instance = new Instance(name, settings.with("HTTP_PORT", String.valueOf(FreePort.find())));
            instances.add(instance);
            started.add(instance);
        }
        started.stream()
                .map(instance -> CompletableFuture.runAsync(instance::start))
                .toList()
                .forEach(CompletableFuture::join);
        return started;
    }

    List<Instance> instances() {
        return instances;
    }

    void stopBroker() {
        brokerFaults++;
        broker.stop(Duration.ofSeconds(30));
    }

    /** The single broker stopped with SIGSTOP: its clients' connections stay open and go silent. */
    void freezeBroker() {
        broker.freeze();
    }

    void thawBroker() {
        broker.thaw();
    }

    void killBroker() {
        brokerFaults++;
        broker.kill();
    }

    /**
     * Whether an instance was started (again) since the last call: a JVM killed in between took the last milliseconds
     * of its counts with it.
     */
    boolean instanceStartedSinceLastCheck() {
        int starts = instances.stream().mapToInt(Instance::starts).sum();
        boolean started = starts > startsChecked;
        startsChecked = starts;
        return started;
    }

    /** Duplicates the instances counted since the last call, over every incarnation. */
    long duplicatesSinceLastCheck() {
        long duplicates = instances.stream().mapToLong(Instance::duplicates).sum();
        long since = duplicates - duplicatesChecked;
        duplicatesChecked = duplicates;
        return since;
    }

    /**
     * Whether a broker was killed or stopped since the last call: only then can an acknowledged send have been lost by
     * the broker rather than by a consumer, or an announcement be on two nodes of a cluster.
     */
    boolean brokerFaultedSinceLastCheck() {
        int faults = brokerPair != null
                ? brokerPair.faults()
                : brokerCluster != null ? brokerCluster.faults() : brokerFaults;
        boolean faulted = faults > brokerFaultsChecked;
        brokerFaultsChecked = faults;
        return faulted;
    }

    /**
     * The ports of the running nodes of a cluster whose queues may have taken a peer's messages since the last call: a
     * node stopped cleanly scales down, and its messages join the end of a peer's queue, behind what was sent there
     * meanwhile.
     */
    Set<Integer> tookMovedMessagesSinceLastCheck() {
        if (brokerCluster == null) {
            return Set.of();
        }
        Set<BrokerNode> stopped = new HashSet<>();
        for (BrokerNode node : brokerCluster.nodes()) {
            Integer before = cleanStopsChecked.put(node, node.cleanStops());
            if (node.cleanStops() > (before == null ? 0 : before)) {
                stopped.add(node);
            }
        }
        if (stopped.isEmpty()) {
            return Set.of();
        }
        return brokerCluster.nodes().stream()
                .filter(node -> node.running() && (stopped.size() > 1 || !stopped.contains(node)))
                .map(BrokerNode::port)
                .collect(Collectors.toSet());
    }

    /** Stopped and started again on its journal with other JVM options (e.g. system properties of broker.xml). */
    void restartBroker(List<String> options) {
        stopBroker();
        brokerOptions = options.toArray(String[]::new);
        startBroker();
    }

    /** The same journal directory: what was persisted before the stop is there again. */
    void startBroker() {
        if (brokerPair != null) {
            brokerPair.start();
        } else if (brokerCluster != null) {
            brokerCluster.start();
        } else {
            broker = BrokerProcess.startWithJmx(settings, false, brokerJmxPort, brokerOptions);
        }
    }

    /** The broker pair (only for {@link #highlyAvailable}). */
    BrokerPair brokerPair() {
        if (brokerPair == null) {
            throw new IllegalStateException("a single broker");
        }
        return brokerPair;
    }

    /** The cluster (only for {@link #clustered}). */
    BrokerCluster brokerCluster() {
        if (brokerCluster == null) {
            throw new IllegalStateException("not a cluster");
        }
        return brokerCluster;
    }

    /**
     * Each broker a client may find messages on, as a client's settings for it alone: the cluster's running nodes, or
     * the one broker (of a pair, the live one, which a client reaches by either connector).
     */
    List<Settings> brokersToRead() {
        if (brokerCluster == null) {
            return List.of(settings);
        }
        return brokerCluster.nodes().stream()
                .filter(BrokerNode::running)
                .map(BrokerNode::clientSettings)
                .toList();
    }

    /**
     * The live broker's own count of the queue's messages not yet acknowledged (see
     * {@link BrokerProcess#messageCount}); of a cluster, the running nodes' and what is on its way between them.
     */
    long messageCount(String queue) throws IOException, JMException {
        if (brokerCluster != null) {
            return brokerCluster.messageCount(queue);
        }
        return brokerPair != null ? brokerPair.messageCount(queue) : broker.messageCount(queue);
    }

    /** The consumers (one a session) the live broker counts on the queue (of a cluster, every running node). */
    long consumerCount(String queue) throws IOException, JMException {
        if (brokerCluster != null) {
            return brokerCluster.consumerCount(queue);
        }
        return brokerPair != null ? brokerPair.consumerCount(queue) : broker.consumerCount(queue);
    }

    /** The single broker (not a pair), for what only it can do: hold the queue back, count its consumers. */
    BrokerProcess broker() {
        if (broker == null) {
            throw new IllegalStateException("a broker pair");
        }
        return broker;
    }

    void stopInstances() {
        instances.forEach(Instance::stop);
    }

    @Override
    public void close() {
        stopInstances();
        if (broker != null) {
            broker.stop(Duration.ofSeconds(30));
        }
        if (brokerPair != null) {
            brokerPair.close();
        }
        if (brokerCluster != null) {
            brokerCluster.close();
        }
    }
}
