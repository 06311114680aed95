package org.idempotent.stack;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import javax.management.JMException;
import javax.management.ObjectName;

/**
 * The ActiveMQ Artemis broker distribution in a process of its own, made into an instance by the product's
 * server-config/artemis/create-instance.sh (as an operator would) under the stack directory, so that it can be
 * stopped, killed and restarted like the real one it is. A restart keeps the instance and its journal.
 */
public final class BrokerProcess extends ChildProcess {

    private final Settings settings;
    private int jmxPort;

    private BrokerProcess(String name, Settings settings, Path instance, boolean showOutput, List<String> jvmOptions)
            throws IOException {
        super(
                name,
                List.of(instance.resolve("bin").resolve("artemis").toString(), "run"),
                environment(settings, jvmOptions),
                settings.stackDir().resolve(name + ".log"),
                showOutput);
        this.settings = settings;
    }

    private static Map<String, String> environment(Settings settings, List<String> jvmOptions) {
        Map<String, String> environment = new HashMap<>(settings.asEnvironment());
        // After the instance's own options in artemis.profile, so these win (heap, test budgets, JMX).
        List<String> options = new ArrayList<>(List.of("-Xmx512m"));
        options.addAll(jvmOptions);
        options.addAll(extraJvmOptions());
        environment.put("JAVA_ARGS_APPEND", String.join(" ", options));
        return environment;
    }

    public static BrokerProcess start(Settings settings, boolean showOutput, String... jvmOptions) {
        return start(settings, showOutput, List.of(), jvmOptions);
    }

    /**
     * With lines for the instance's etc/broker.properties, which Artemis applies over broker.xml at start (e.g. a
     * test's own queues and their grants).
     */
    public static BrokerProcess start(
            Settings settings, boolean showOutput, List<String> brokerProperties, String... jvmOptions) {
        return start("broker", settings, Map.of(), showOutput, brokerProperties, List.of(jvmOptions));
    }

    /**
     * One broker of a primary/backup pair or of a cluster, instance {@code name} under the stack directory:
     * {@code pairSettings} are create-instance.sh's (BROKER_HA_ROLE, BROKER_STORE, BROKER_CLUSTER_PEERS ...).
     * Returns once it is live or, for a backup whose primary is live, once it has announced itself as the backup;
     * with JMX on {@code jmxPort}.
     */
    public static BrokerProcess startMember(
            String name,
            Settings settings,
            Map<String, String> pairSettings,
            int jmxPort,
            List<String> brokerProperties) {
        BrokerProcess broker =
                start(name, settings, pairSettings, false, brokerProperties, RemoteJmx.jvmOptions(jmxPort));
        broker.jmxPort = jmxPort;
        return broker;
    }

    private static BrokerProcess start(
            String name,
            Settings settings,
            Map<String, String> instanceSettings,
            boolean showOutput,
            List<String> brokerProperties,
            List<String> jvmOptions) {
        try {
            Path instance = settings.stackDir().resolve(name);
            Path properties = instance.resolve("etc").resolve("broker.properties");
            String created = createdWith(settings, instanceSettings);
            Created before = CREATED.get(instance);
            if (before != null
                    && before.settings().equals(created)
                    && Files.isExecutable(instance.resolve("bin").resolve("artemis"))) {
                // A restart of the instance this JVM made with the same settings: what create-instance.sh would write
                // again is there, but for the lines of the last start, which go.
                Files.writeString(properties, before.properties());
            } else {
                createInstance(name, settings, instanceSettings, instance);
                CREATED.put(instance, new Created(created, Files.readString(properties)));
            }
            // After what create-instance.sh wrote there (a TLS acceptor, the pair, if any).
            Files.write(properties, brokerProperties, StandardOpenOption.APPEND);
            Path log = settings.stackDir().resolve(name + ".log");
            long logBefore = Files.exists(log) ? Files.size(log) : 0;
            BrokerProcess broker = new BrokerProcess(name, settings, instance, showOutput, jvmOptions);
            broker.awaitStarted(Duration.ofSeconds(60), instanceSettings.containsKey("BROKER_HA_ROLE"), logBefore);
            return broker;
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /**
     * The settings each instance directory was made with by this JVM, and the broker.properties it was left with: a
     * restart with the same settings skips create-instance.sh, whose three JVMs took about 4 s of each restart.
     */
    private static final Map<Path, Created> CREATED = new ConcurrentHashMap<>();

    private record Created(String settings, String properties) {}

    private static String createdWith(Settings settings, Map<String, String> instanceSettings) {
        return new TreeMap<>(settings.asEnvironment()) + " " + new TreeMap<>(instanceSettings);
    }

    private static void createInstance(
            String name, Settings settings, Map<String, String> instanceSettings, Path instance) throws IOException {
        Path log = settings.stackDir().resolve(name + "-instance.log");
        Files.createDirectories(log.getParent());
        ProcessBuilder builder = new ProcessBuilder(
                        "bash", Build.BROKER_INSTANCE_SCRIPT.toString(), instance.toString())
                .redirectErrorStream(true)
                .redirectOutput(ProcessBuilder.Redirect.appendTo(log.toFile()));
        builder.environment().putAll(settings.asEnvironment());
        builder.environment().putAll(instanceSettings);
        builder.environment().put("ARTEMIS_HOME", Build.artemisHome().toString());
        builder.environment().put("BROKER_PLUGINS", Build.BROKER_PLUGINS.toString());
        // The `artemis create` JVM of the script, as the broker's own.
        builder.environment().put("JAVA_ARGS_APPEND", String.join(" ", extraJvmOptions()));
        try {
            int exit = builder.start().waitFor();
            if (exit != 0) {
                throw new IllegalStateException(
                        "creating the broker instance failed (exit " + exit + "): " + Files.readString(log));
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted", e);
        }
    }

    /** With its platform MBean server open on {@code jmxPort} (loopback, no authentication), for {@link #messageCount}. */
    public static BrokerProcess startWithJmx(Settings settings, boolean showOutput, int jmxPort, String... jvmOptions) {
        return startWithJmx(settings, showOutput, jmxPort, List.of(), jvmOptions);
    }

    public static BrokerProcess startWithJmx(
            Settings settings, boolean showOutput, int jmxPort, List<String> brokerProperties, String... jvmOptions) {
        List<String> options = new ArrayList<>(RemoteJmx.jvmOptions(jmxPort));
        options.addAll(List.of(jvmOptions));
        BrokerProcess broker = start(settings, showOutput, brokerProperties, options.toArray(String[]::new));
        broker.jmxPort = jmxPort;
        return broker;
    }

    /**
     * The broker's own count of the queue's messages not yet acknowledged: waiting, scheduled for redelivery, or
     * delivered to a consumer that has not acknowledged them (a message stuck in delivery counts).
     */
    public long messageCount(String queue) throws IOException, JMException {
        return queueNumber(queue, "MessageCount").longValue();
    }

    /**
     * The queue's messages handed to a consumer and not acknowledged yet: in a session's window or being processed.
     * With persist-delivery-count-before-delivery, each is marked redelivered if another broker delivers it again.
     */
    public long deliveringCount(String queue) throws IOException, JMException {
        return queueNumber(queue, "DeliveringCount").longValue();
    }

    /** How many consumers the queue has (each session of each instance is one). */
    public int consumerCount(String queue) throws IOException, JMException {
        return queueNumber(queue, "ConsumerCount").intValue();
    }

    /**
     * Messages waiting in the cluster's store-and-forward queues of this broker (one per other node, on their way to
     * it), all together; 0 on a broker in no cluster.
     */
    public long storeAndForwardCount() throws IOException, JMException {
        try (RemoteJmx jmx = RemoteJmx.connect(jmxPort)) {
            long count = 0;
            for (ObjectName queue : jmx.names(
                    new ObjectName(
                            "org.apache.activemq.artemis:component=addresses,subcomponent=queues,queue=\"$.artemis.internal.sf.*\",*"))) {
                count += (Long) jmx.attribute(queue, "MessageCount");
            }
            return count;
        }
    }

    /** Messages sent to the queue since this broker started. */
    public long messagesAdded(String queue) throws IOException, JMException {
        return queueNumber(queue, "MessagesAdded").longValue();
    }

    /** Messages of the queue its consumers acknowledged since this broker started. */
    public long messagesAcknowledged(String queue) throws IOException, JMException {
        return queueNumber(queue, "MessagesAcknowledged").longValue();
    }

    private Number queueNumber(String queue, String attribute) throws IOException, JMException {
        try (RemoteJmx jmx = RemoteJmx.connect(jmxPort)) {
            return (Number) jmx.attribute(queueMBean(jmx, queue), attribute);
        }
    }

    /** Stops dispatching the queue's messages to its consumers, which stay connected; they keep arriving. */
    public void pause(String queue) throws IOException, JMException {
        try (RemoteJmx jmx = RemoteJmx.connect(jmxPort)) {
            jmx.invoke(queueMBean(jmx, queue), "pause");
        }
    }

    public void resume(String queue) throws IOException, JMException {
        try (RemoteJmx jmx = RemoteJmx.connect(jmxPort)) {
            jmx.invoke(queueMBean(jmx, queue), "resume");
        }
    }

    /**
     * How many consumers the queue admits at once (-1: any number); those beyond it are refused as they attach, those
     * attached stay.
     */
    public void limitConsumers(String queue, int maxConsumers) throws IOException, JMException {
        try (RemoteJmx jmx = RemoteJmx.connect(jmxPort)) {
            Set<ObjectName> brokers = jmx.names(new ObjectName("org.apache.activemq.artemis:broker=*,component=*,*"));
            jmx.invoke(
                    new ObjectName("org.apache.activemq.artemis:broker="
                            + brokers.iterator().next().getKeyProperty("broker")),
                    "updateQueue",
                    String.format("{\"name\":\"%s\",\"max-consumers\":%d}", queue, maxConsumers));
        }
    }

    private ObjectName queueMBean(RemoteJmx jmx, String queue) throws IOException, JMException {
        if (jmxPort == 0) {
            throw new IllegalStateException("started without JMX");
        }
        Set<ObjectName> names = jmx.names(new ObjectName(
                "org.apache.activemq.artemis:component=addresses,subcomponent=queues,queue=\"" + queue + "\",*"));
        if (names.size() != 1) {
            throw new IllegalStateException("queue " + queue + " not found once on the broker: " + names);
        }
        return names.iterator().next();
    }

    /**
     * Until it listens or, {@code mayWait} (a pair's member), has announced itself as a live broker's backup (in the
     * log written since this start, which begins at {@code logBefore}).
     */
    private void awaitStarted(Duration timeout, boolean mayWait, long logBefore) throws IOException {
        Instant deadline = Instant.now().plus(timeout);
        while (Instant.now().isBefore(deadline)) {
            failIfDead("starting");
            if (mayWait && Files.readString(log()).substring((int) logBefore).contains("AMQ221031")) {
                return;
            }
            try (Socket socket = new Socket()) {
                socket.connect(new InetSocketAddress(settings.get("BROKER_HOST"), settings.getInt("BROKER_PORT")), 500);
                return;
            } catch (IOException notYet) {
                pause();
            }
        }
        stop(Duration.ofSeconds(5));
        throw new IllegalStateException("broker not listening after " + timeout + "; see " + log());
    }

    private static void pause() {
        try {
            Thread.sleep(200);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted", e);
        }
    }
}
